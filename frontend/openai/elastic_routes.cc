#include "frontend/openai/elastic_routes.h"

#include <limits>

#include "frontend/openai/api_error.h"
#include "frontend/openai/request_body.h"
#include "frontend/openai/responses.h"
#include "frontend/openai/server_info.h"

namespace llmserve::frontend::openai {

namespace {

constexpr int64_t kDefaultDrainTimeoutS = 120;
constexpr int64_t kMaxDataParallelSize = 65536;  // ranks are 2-byte ZMQ identities

// A positive integer field (JSON integers only; 4.0 and "4" are refused).
MaybeError PositiveInt(const nlohmann::json& json, const char* name, int64_t max, int64_t* out) {
  const auto& v = json.at(name);
  if (!v.is_number_integer())
    return BadRequest(std::string("'") + name + "' must be an integer", name);
  const int64_t n = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max) ? max + 1
                                                                                              : v.get<int64_t>();
  if (n < 1 || n > max)
    return BadRequest(std::string("'") + name + "' must be in 1.." + std::to_string(max), name);
  *out = n;
  return std::nullopt;
}

}  // namespace

MaybeError ParseScaleRequest(std::string_view body, proto::ScaleRequest* out) {
  nlohmann::json json;
  if (MaybeError e = ParseJsonObject(body, &json)) return e;
  for (const auto& [key, value] : json.items())
    if (key != "new_data_parallel_size" && key != "drain_timeout")
      return BadRequest("unknown field '" + key + "'; expected new_data_parallel_size and drain_timeout", key);
  if (!json.contains("new_data_parallel_size"))
    return BadRequest("'new_data_parallel_size' is required", "new_data_parallel_size");
  int64_t size = 0;
  int64_t drain = kDefaultDrainTimeoutS;
  if (MaybeError e = PositiveInt(json, "new_data_parallel_size", kMaxDataParallelSize, &size)) return e;
  if (json.contains("drain_timeout"))
    if (MaybeError e = PositiveInt(json, "drain_timeout", std::numeric_limits<int32_t>::max(), &drain)) return e;
  out->set_new_data_parallel_size(static_cast<uint32_t>(size));
  out->set_drain_timeout_s(static_cast<uint32_t>(drain));
  return std::nullopt;
}

void RegisterElasticRoutes(const ElasticRoutesConfig& config, http::Router* router) {
  http::Handler scale = [config, check_key = ApiKeyFilter(config.admin_api_key)](
                            http::HttpRequest request, std::shared_ptr<http::ResponseWriter> w) {
    if (config.admin_api_key.empty() || !config.scale)
      return w->Respond(ErrorResponse(MakeError(
          403, "Elastic scaling is disabled: start `llmserve serve` with --admin-api-key KEY and send "
               "'Authorization: Bearer KEY'.")));
    if (auto refused = check_key(request)) return w->Respond(std::move(*refused));
    proto::ScaleRequest scale_request;
    if (MaybeError e = ParseScaleRequest(request.body, &scale_request)) return w->Respond(ErrorResponse(*e));
    const bool started = config.scale(scale_request, [w](const proto::ScaleResponse& response) {
      const int status = response.http_status() == 0 ? (response.ok() ? 200 : 500)
                                                     : static_cast<int>(response.http_status());
      if (status == 200) {
        w->Respond(http::HttpResponse::Make(200, "application/json",
                                            Dump(nlohmann::json{{"message", response.message()}})));
      } else {
        w->Respond(ErrorResponse(MakeError(status, response.message())));
      }
    });
    if (!started)
      w->Respond(ErrorResponse(MakeError(409, "Another scale is in progress; retry when "
                                              "/is_scaling_elastic_ep answers false.")));
  };
  router->Add("POST", "/scale_elastic_ep", scale);
  http::Handler is_scaling = [is = config.is_scaling](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    const bool scaling = is && is();
    w->Respond(http::HttpResponse::Make(200, "application/json",
                                        Dump(nlohmann::json{{"is_scaling_elastic_ep", scaling}})));
  };
  router->Add("GET", "/is_scaling_elastic_ep", is_scaling);
  router->Add("POST", "/is_scaling_elastic_ep", is_scaling);
}

}  // namespace llmserve::frontend::openai
