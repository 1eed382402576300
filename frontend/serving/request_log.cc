#include "frontend/serving/request_log.h"

#include <sstream>

#include <nlohmann/json.hpp>

namespace llmserve::frontend::serving {

namespace {

// Text cut to max_log_len characters (bytes; a cut inside a UTF-8 sequence is
// replaced on output), quoted and escaped.
std::string Quoted(std::string_view text, const std::optional<int32_t>& max_len) {
  if (max_len && text.size() > static_cast<size_t>(*max_len)) text = text.substr(0, static_cast<size_t>(*max_len));
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Ids(const std::vector<int32_t>& ids, const std::optional<int32_t>& max_len) {
  size_t n = ids.size();
  if (max_len) n = std::min(n, static_cast<size_t>(*max_len));
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

template <typename T>
std::string Optional(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "None";
}

const char* Bool(bool b) { return b ? "True" : "False"; }

// The fields vLLM's SamplingParams repr shows, in its order.
std::string DescribeParams(const proto::SamplingParams& p) {
  std::ostringstream s;
  s << "SamplingParams(n=" << p.n << ", presence_penalty=" << p.presence_penalty
    << ", frequency_penalty=" << p.frequency_penalty << ", repetition_penalty=" << p.repetition_penalty
    << ", temperature=" << p.temperature << ", top_p=" << p.top_p << ", top_k=" << p.top_k << ", min_p=" << p.min_p
    << ", seed=" << Optional(p.seed) << ", stop=" << nlohmann::json(p.stop).dump()
    << ", stop_token_ids=" << Ids(p.stop_token_ids, std::nullopt) << ", ignore_eos=" << Bool(p.ignore_eos)
    << ", max_tokens=" << Optional(p.max_tokens) << ", min_tokens=" << p.min_tokens
    << ", logprobs=" << Optional(p.logprobs) << ", prompt_logprobs=" << Optional(p.prompt_logprobs)
    << ", skip_special_tokens=" << Bool(p.skip_special_tokens)
    << ", spaces_between_special_tokens=" << Bool(p.spaces_between_special_tokens)
    << ", structured_outputs=" << (p.structured_outputs ? "set" : "None") << ")";
  return s.str();
}

}  // namespace

std::string ReceivedRequestLine(const RequestLogOptions& o, std::string_view request_id,
                                const std::optional<std::string>& prompt, const proto::SamplingParams& params,
                                const std::vector<int32_t>& prompt_token_ids) {
  std::string line = "Received request " + std::string(request_id) + ": prompt: ";
  line += prompt ? Quoted(*prompt, o.max_log_len) : "None";
  line += ", params: " + DescribeParams(params);
  line += ", prompt_token_ids: " + Ids(prompt_token_ids, o.max_log_len) + ".";
  return line;
}

std::string GeneratedResponseLine(const RequestLogOptions& o, std::string_view request_id, std::string_view output,
                                  const std::vector<int32_t>& output_token_ids, std::string_view finish_reason) {
  return "Generated response " + std::string(request_id) + ": output: " + Quoted(output, o.max_log_len) +
         ", output_token_ids: " + Ids(output_token_ids, o.max_log_len) + ", finish_reason: " +
         std::string(finish_reason);
}

}  // namespace llmserve::frontend::serving
