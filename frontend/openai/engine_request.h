#pragma once
// Building the proto::EngineCoreRequest for one prompt of a validated OpenAI
// request: SamplingParams from the request and context, plus priority,
// cache_salt, arrival time, and the DP rank a router pinned with the
// X-data-parallel-rank header (vLLM's spelling).
//
// n > 1 is carried in SamplingParams.n; whether the frontend fans it out into
// n engine requests (as vLLM V1 does) is the caller's choice.

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/http/http_message.h"
#include "frontend/openai/sampling_request.h"
#include "proto/engine_core_request.h"

namespace llmserve::frontend::openai {

struct EngineRequestInputs {
  std::string request_id;                // unique id (see ResolveRequestId)
  std::vector<int32_t> prompt_token_ids; // the tokenized (or client-given) prompt
  bool prompt_is_token_ids = false;      // the client sent ids, not text
  double arrival_time = 0.0;             // seconds since the epoch
  int32_t client_index = 0;              // this frontend's index among the API servers
};

// Fills `out`; 400 for a bad X-data-parallel-rank header or a prompt that does not fit.
MaybeError BuildEngineRequest(const http::HttpRequest& http_request, const SamplingRequest& sampling,
                              const SamplingContext& context, EngineRequestInputs inputs,
                              proto::EngineCoreRequest* out);

}  // namespace llmserve::frontend::openai
