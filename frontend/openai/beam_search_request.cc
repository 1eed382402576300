#include "frontend/openai/beam_search_request.h"

#include <cmath>
#include <string>

namespace llmserve::frontend::openai {
namespace {

ApiError Unsupported(const std::string& field) {
  return BadRequest("'" + field + "' is not supported with beam search (use_beam_search); leave it unset.", field);
}

// The first set field that beam search would not honour, by name.
std::optional<std::string> UnhonouredField(const SamplingRequest& r) {
  if (!r.stop.empty()) return "stop";
  if (!r.stop_token_ids.empty()) return "stop_token_ids";
  if (r.min_tokens > 0) return "min_tokens";
  if (r.top_p && *r.top_p != 1.0) return "top_p";
  if (r.top_k && *r.top_k != 0 && *r.top_k != -1) return "top_k";
  if (r.min_p && *r.min_p != 0.0) return "min_p";
  if (r.repetition_penalty && *r.repetition_penalty != 1.0) return "repetition_penalty";
  if (r.presence_penalty != 0.0) return "presence_penalty";
  if (r.frequency_penalty != 0.0) return "frequency_penalty";
  if (!r.logit_bias.empty()) return "logit_bias";
  if (!r.allowed_token_ids.empty()) return "allowed_token_ids";
  if (r.echo) return "echo";
  if (r.prompt_logprobs) return "prompt_logprobs";
  return std::nullopt;
}

}  // namespace

MaybeError ReadBeamSearchFields(FieldReader& reader, const ParseOptions& options, bool stream_allowed,
                                SamplingRequest* out) {
  LLMSERVE_API_TRY(reader.Bool("use_beam_search", &out->use_beam_search));
  LLMSERVE_API_TRY(reader.Double("length_penalty", &out->length_penalty));
  if (!std::isfinite(out->length_penalty)) return BadRequest("length_penalty must be a finite number.", "length_penalty");
  if (!out->use_beam_search) {
    if (out->length_penalty != 1.0)
      return BadRequest("length_penalty applies only to beam search; set use_beam_search or leave it unset.",
                        "length_penalty");
    return std::nullopt;
  }
  if (out->stream && !stream_allowed) return BadRequest("Streaming is not currently supported with beam search.", "stream");
  if (auto field = UnhonouredField(*out)) return Unsupported(*field);
  if (out->structured_outputs) {
    return BadRequest(
        "Structured outputs (response_format, structured_outputs, guided_*, a required or named tool_choice) "
        "are not supported with beam search.",
        "structured_outputs");
  }
  if (options.max_logprobs >= 0 && 2 * static_cast<int64_t>(out->n) > options.max_logprobs) {
    return BadRequest("Beam search asks the engine for 2 * n logprobs per step: n must be at most " +
                          std::to_string(options.max_logprobs / 2) + " with --max-logprobs " +
                          std::to_string(options.max_logprobs) + ", got " + std::to_string(out->n) + ".",
                      "n");
  }
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
