#include "frontend/openai/sampling_request.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmserve::frontend::openai {
namespace {

constexpr int32_t kMaxN = 128;
constexpr double kGreedyEpsilon = 1e-5;

MaybeError CheckRange(const char* name, const std::optional<double>& v, double lo, bool lo_open, double hi,
                      const std::string& rule) {
  if (!v) return std::nullopt;
  double x = *v;
  bool ok = std::isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi;
  if (!ok) return BadRequest(std::string(name) + " must be " + rule + ", got " + nlohmann::json(x).dump() + ".", name);
  return std::nullopt;
}

MaybeError ReadStop(FieldReader& reader, std::vector<std::string>* out) {
  reader.Known("stop");
  const nlohmann::json* v = reader.Get("stop");
  if (!v) return std::nullopt;
  out->clear();
  if (v->is_string()) {
    out->push_back(v->get<std::string>());
  } else if (v->is_array()) {
    for (const auto& s : *v) {
      if (!s.is_string()) return BadRequest("'stop' must be a string or an array of strings, got an array containing " + JsonTypeName(s), "stop");
      out->push_back(s.get<std::string>());
    }
  } else {
    return BadRequest("'stop' must be a string or an array of strings, got " + JsonTypeName(*v), "stop");
  }
  for (const auto& s : *out) {
    if (s.empty()) return BadRequest("'stop' must not contain empty strings", "stop");
  }
  return std::nullopt;
}

MaybeError ReadLogitBias(FieldReader& reader, std::map<int32_t, double>* out) {
  reader.Known("logit_bias");
  const nlohmann::json* v = reader.Get("logit_bias");
  if (!v) return std::nullopt;
  if (!v->is_object()) return BadRequest("'logit_bias' must be an object mapping token ids to biases, got " + JsonTypeName(*v), "logit_bias");
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string& key = it.key();
    size_t used = 0;
    long long id = -1;
    bool ok = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() <= 10;
    if (ok) {
      id = std::stoll(key, &used);
      ok = used == key.size() && id <= kInt32Max;
    }
    if (!ok) return BadRequest("'logit_bias' keys must be token ids (non-negative integers written as strings), got \"" + key + "\"", "logit_bias");
    if (!it->is_number() || !std::isfinite(it->get<double>())) {
      return BadRequest("'logit_bias' values must be numbers, got " + JsonTypeName(*it) + " for token " + key, "logit_bias");
    }
    (*out)[static_cast<int32_t>(id)] = std::clamp(it->get<double>(), -100.0, 100.0);
  }
  return std::nullopt;
}

MaybeError ReadStreamOptions(FieldReader& reader, SamplingRequest* out) {
  reader.Known("stream_options");
  const nlohmann::json* v = reader.Get("stream_options");
  if (!v) return std::nullopt;
  if (!v->is_object()) return BadRequest("'stream_options' must be an object, got " + JsonTypeName(*v), "stream_options");
  FieldReader options(*v);
  out->include_usage = true;  // vLLM: stream_options present means include_usage unless set false
  MaybeError e = options.Bool("include_usage", &out->include_usage);
  if (!e) e = options.Bool("continuous_usage_stats", &out->continuous_usage_stats);
  if (e) {
    e->message = "stream_options." + e->message.substr(1);
    e->message.insert(0, "'");
    e->param = "stream_options";
  }
  return e;
}

}  // namespace

MaybeError ReadSamplingFields(FieldReader& reader, const ParseOptions& options, SamplingRequest* out) {
  LLMSERVE_API_TRY(reader.Int32("n", 1, kMaxN, &out->n));
  LLMSERVE_API_TRY(reader.OptDouble("temperature", &out->temperature));
  LLMSERVE_API_TRY(CheckRange("temperature", out->temperature, 0.0, false, std::numeric_limits<double>::max(), "non-negative"));
  LLMSERVE_API_TRY(reader.OptDouble("top_p", &out->top_p));
  LLMSERVE_API_TRY(CheckRange("top_p", out->top_p, 0.0, true, 1.0, "in (0, 1]"));
  LLMSERVE_API_TRY(reader.OptInt32("top_k", std::numeric_limits<int32_t>::min(), kInt32Max, &out->top_k));
  if (out->top_k && *out->top_k < -1) {
    return BadRequest("top_k must be -1 or 0 (disable), or at least 1, got " + std::to_string(*out->top_k) + ".", "top_k");
  }
  LLMSERVE_API_TRY(reader.OptDouble("min_p", &out->min_p));
  LLMSERVE_API_TRY(CheckRange("min_p", out->min_p, 0.0, false, 1.0, "in [0, 1]"));
  LLMSERVE_API_TRY(reader.OptDouble("repetition_penalty", &out->repetition_penalty));
  LLMSERVE_API_TRY(CheckRange("repetition_penalty", out->repetition_penalty, 0.0, true, 2.0e38, "greater than zero"));
  LLMSERVE_API_TRY(reader.Double("presence_penalty", &out->presence_penalty));
  LLMSERVE_API_TRY(CheckRange("presence_penalty", out->presence_penalty, -2.0, false, 2.0, "in [-2, 2]"));
  LLMSERVE_API_TRY(reader.Double("frequency_penalty", &out->frequency_penalty));
  LLMSERVE_API_TRY(CheckRange("frequency_penalty", out->frequency_penalty, -2.0, false, 2.0, "in [-2, 2]"));
  if (reader.Get("seed")) {
    int64_t seed = 0;
    LLMSERVE_API_TRY(reader.Int("seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), &seed));
    out->seed = seed;
  } else {
    reader.Known("seed");
  }
  LLMSERVE_API_TRY(ReadStop(reader, &out->stop));
  LLMSERVE_API_TRY(reader.IntList("stop_token_ids", 0, kInt32Max, &out->stop_token_ids));
  LLMSERVE_API_TRY(ReadLogitBias(reader, &out->logit_bias));
  LLMSERVE_API_TRY(reader.IntList("allowed_token_ids", 0, kInt32Max, &out->allowed_token_ids));
  if (reader.Get("allowed_token_ids") && out->allowed_token_ids.empty()) {
    return BadRequest("allowed_token_ids must not be empty.", "allowed_token_ids");
  }
  LLMSERVE_API_TRY(reader.OptInt32("prompt_logprobs", 0, options.max_logprobs, &out->prompt_logprobs));
  LLMSERVE_API_TRY(reader.Bool("ignore_eos", &out->ignore_eos));
  LLMSERVE_API_TRY(reader.Int32("min_tokens", 0, kInt32Max, &out->min_tokens));
  LLMSERVE_API_TRY(reader.Bool("skip_special_tokens", &out->skip_special_tokens));
  LLMSERVE_API_TRY(reader.Bool("spaces_between_special_tokens", &out->spaces_between_special_tokens));
  LLMSERVE_API_TRY(reader.Bool("include_stop_str_in_output", &out->include_stop_str_in_output));
  LLMSERVE_API_TRY(reader.Bool("return_token_ids", &out->return_token_ids));
  LLMSERVE_API_TRY(reader.Bool("return_tokens_as_token_ids", &out->return_tokens_as_token_ids));
  out->return_tokens_as_token_ids = out->return_tokens_as_token_ids || options.return_tokens_as_token_ids;
  LLMSERVE_API_TRY(reader.Bool("stream", &out->stream));
  LLMSERVE_API_TRY(ReadStreamOptions(reader, out));
  LLMSERVE_API_TRY(reader.String("user", &out->user));
  LLMSERVE_API_TRY(reader.Int32("priority", std::numeric_limits<int32_t>::min(), kInt32Max, &out->priority));
  LLMSERVE_API_TRY(reader.OptString("cache_salt", &out->cache_salt));
  if (out->cache_salt && out->cache_salt->empty()) {
    return BadRequest("Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt");
  }
  LLMSERVE_API_TRY(reader.OptString("request_id", &out->request_id));
  LLMSERVE_API_TRY(reader.Object("kv_transfer_params", &out->kv_transfer_params));
  return std::nullopt;
}

MaybeError CheckSamplingRequest(const SamplingRequest& request, const nlohmann::json& body) {
  auto it = body.find("stream_options");
  if (it != body.end() && !it->is_null() && !request.stream) {
    return BadRequest("Stream options can only be defined when `stream=True`.", "stream_options");
  }
  if (request.max_tokens && request.min_tokens > *request.max_tokens) {
    return BadRequest("min_tokens must be less than or equal to max_tokens=" + std::to_string(*request.max_tokens) +
                          ", got " + std::to_string(request.min_tokens) + ".",
                      "min_tokens");
  }
  if (request.prompt_logprobs && request.stream) {
    return BadRequest("prompt_logprobs is not compatible with streaming.", "prompt_logprobs");
  }
  return std::nullopt;
}

MaybeError ToSamplingParams(const SamplingRequest& request, const SamplingContext& context,
                            proto::SamplingParams* out) {
  if (context.prompt_tokens >= context.max_model_len) {
    return BadRequest("This model's maximum context length is " + std::to_string(context.max_model_len) +
                      " tokens. However, your prompt has " + std::to_string(context.prompt_tokens) +
                      " tokens, which leaves no room for output. Please reduce the length of the prompt.");
  }
  int32_t room = context.max_model_len - context.prompt_tokens;
  std::optional<int32_t> max_tokens = request.max_tokens;
  if (max_tokens && *max_tokens > room) {
    return BadRequest("This model's maximum context length is " + std::to_string(context.max_model_len) +
                          " tokens. However, you requested " +
                          std::to_string(static_cast<int64_t>(*max_tokens) + context.prompt_tokens) + " tokens (" +
                          std::to_string(context.prompt_tokens) + " in the prompt, " + std::to_string(*max_tokens) +
                          " in the completion). Please reduce the length of the prompt or completion.",
                      "max_tokens");
  }
  if (!max_tokens) max_tokens = room;
  // echo with max_tokens 0 answers the prompt alone; the engine still runs
  // one token, which the answer leaves out (vLLM).
  if (*max_tokens == 0) max_tokens = 1;
  if (context.defaults.max_tokens) max_tokens = std::min(*max_tokens, *context.defaults.max_tokens);

  proto::SamplingParams p;
  const GenerationDefaults& d = context.defaults;
  p.n = request.n;
  p.temperature = request.temperature.value_or(d.temperature.value_or(1.0));
  p.top_p = request.top_p.value_or(d.top_p.value_or(1.0));
  int32_t top_k = request.top_k.value_or(d.top_k.value_or(0));
  p.top_k = top_k < 0 ? 0 : top_k;
  p.min_p = request.min_p.value_or(d.min_p.value_or(0.0));
  p.repetition_penalty = request.repetition_penalty.value_or(d.repetition_penalty.value_or(1.0));
  if (p.temperature < kGreedyEpsilon) {
    p.temperature = 0.0;
    p.top_p = 1.0;
    p.top_k = 0;
    p.min_p = 0.0;
  }
  p.presence_penalty = request.presence_penalty;
  p.frequency_penalty = request.frequency_penalty;
  p.seed = request.seed;
  p.stop = request.stop;
  p.stop_token_ids = request.stop_token_ids;
  p.ignore_eos = request.ignore_eos;
  p.max_tokens = max_tokens;
  p.min_tokens = request.min_tokens;
  p.logprobs = request.logprobs;
  if (request.prompt_logprobs) p.prompt_logprobs = *request.prompt_logprobs;
  // A completion's echo with logprobs shows the prompt tokens' logprobs too.
  if (!p.prompt_logprobs && request.echo_prompt_logprobs && request.logprobs) p.prompt_logprobs = *request.logprobs;
  p.detokenize = true;
  p.skip_special_tokens = request.skip_special_tokens;
  p.spaces_between_special_tokens = request.spaces_between_special_tokens;
  p.include_stop_str_in_output = request.include_stop_str_in_output;
  p.output_kind = request.stream ? proto::OutputKind::kDelta : proto::OutputKind::kFinalOnly;
  p.logit_bias = request.logit_bias;
  p.allowed_token_ids = request.allowed_token_ids;
  p.structured_outputs = request.structured_outputs;
  if (request.kv_transfer_params.is_object()) {
    const std::vector<uint8_t> bytes =
        nlohmann::json::to_msgpack(nlohmann::json{{"kv_transfer_params", request.kv_transfer_params}});
    p.extra_args.msgpack.assign(bytes.begin(), bytes.end());
  }
  p.all_stop_token_ids = request.stop_token_ids;
  for (int32_t eos : context.eos_token_ids) {
    if (std::find(p.all_stop_token_ids.begin(), p.all_stop_token_ids.end(), eos) == p.all_stop_token_ids.end()) {
      p.all_stop_token_ids.push_back(eos);
    }
  }
  *out = std::move(p);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
