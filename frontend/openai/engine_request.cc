#include "frontend/openai/engine_request.h"

namespace llmserve::frontend::openai {

MaybeError BuildEngineRequest(const http::HttpRequest& http_request, const SamplingRequest& sampling,
                              const SamplingContext& context, EngineRequestInputs inputs,
                              proto::EngineCoreRequest* out) {
  proto::EngineCoreRequest req;
  if (const std::string* rank = http_request.header("x-data-parallel-rank")) {
    bool ok = !rank->empty() && rank->size() <= 9 && rank->find_first_not_of("0123456789") == std::string::npos;
    if (!ok) {
      return BadRequest("X-data-parallel-rank must be a non-negative integer, got '" + *rank + "'");
    }
    req.data_parallel_rank = std::stoi(*rank);
  }
  SamplingContext ctx = context;
  ctx.prompt_tokens = static_cast<int32_t>(inputs.prompt_token_ids.size());
  LLMSERVE_API_TRY(ToSamplingParams(sampling, ctx, &req.sampling_params));
  req.request_id = std::move(inputs.request_id);
  req.prompt_token_ids = std::move(inputs.prompt_token_ids);
  req.prompt_is_token_ids = inputs.prompt_is_token_ids;
  req.arrival_time = inputs.arrival_time;
  req.client_index = inputs.client_index;
  req.cache_salt = sampling.cache_salt;
  req.priority = sampling.priority;
  *out = std::move(req);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
