#pragma once
// Elastic data-parallel scaling endpoints (vLLM's elastic EP API, without its
// 503-while-scaling middleware: every other endpoint keeps serving):
//   POST /scale_elastic_ep {"new_data_parallel_size": N, "drain_timeout": S}
//     needs --admin-api-key (403 without one configured) sent as
//     'Authorization: Bearer KEY' (401 otherwise); 400 for a bad body, 409
//     while another scale runs; then the launcher's answer: 200
//     {"message": "Scaled to N data parallel engines"}, 408 when removed ranks
//     did not drain in time (the scale still completed), 500 on failure.
//   GET|POST /is_scaling_elastic_ep -> {"is_scaling_elastic_ep": bool}
//     (open, like /health: routers poll it).

#include <functional>
#include <string>
#include <string_view>

#include "frontend/http/router.h"
#include "frontend/openai/json_fields.h"
#include "proto/admin.pb.h"

namespace llmserve::frontend::openai {

struct ElasticRoutesConfig {
  std::string admin_api_key;  // empty: scaling is disabled (403)
  // Starts a scale and calls back with the launcher's answer (any thread);
  // false when a scale is already in flight here. Unset: scaling disabled.
  std::function<bool(const proto::ScaleRequest&, std::function<void(const proto::ScaleResponse&)>)> scale;
  // Whether a scale is in progress (this frontend's or one the coordinator announced).
  std::function<bool()> is_scaling;
};

// Parses and checks the POST body: new_data_parallel_size an integer >= 1
// (required), drain_timeout an integer >= 1 (seconds, default 120).
MaybeError ParseScaleRequest(std::string_view body, proto::ScaleRequest* out);

// Adds POST /scale_elastic_ep and GET|POST /is_scaling_elastic_ep to `router`.
void RegisterElasticRoutes(const ElasticRoutesConfig& config, http::Router* router);

}  // namespace llmserve::frontend::openai
