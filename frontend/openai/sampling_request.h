#pragma once
// SamplingRequest: the sampling and stopping fields that /v1/completions and
// /v1/chat/completions share, as the client sent them, validated; and their
// conversion to the engine's proto::SamplingParams.
//
// Ranges follow vLLM's SamplingParams checks: temperature >= 0, top_p in
// (0, 1], top_k -1 / 0 (all) or >= 1, min_p in [0, 1], presence and frequency
// penalties in [-2, 2], repetition_penalty > 0, n >= 1 (and <= 128 as OpenAI),
// max_tokens >= 1 (0 with a completion's echo), 0 <= min_tokens <= max_tokens, logprobs <= max_logprobs,
// logit_bias keys are token ids written as strings with values clamped to
// [-100, 100].

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/json_fields.h"
#include "proto/sampling_params.h"

namespace llmserve::frontend::openai {

// The server's structured-output defaults (vLLM --structured-outputs-config).
struct StructuredOutputsConfig {
  bool disable_any_whitespace = false;         // every JSON constraint is compact
  bool disable_additional_properties = false;  // (always so here: objects allow only declared keys)

  bool operator==(const StructuredOutputsConfig&) const = default;
};

// Limits a parser enforces that come from the server's configuration.
struct ParseOptions {
  int32_t max_logprobs = 20;  // most top logprobs a request may ask for (vLLM --max-logprobs)
  StructuredOutputsConfig structured_outputs;  // defaults for constrained requests
  bool return_tokens_as_token_ids = false;     // vLLM --return-tokens-as-token-ids: on for every request
};

struct SamplingRequest {
  int32_t n = 1;                             // choices per prompt
  std::optional<int32_t> max_tokens;         // output tokens at most; unset = up to the context length
  std::optional<double> temperature;         // unset = the model's default (else 1.0)
  std::optional<double> top_p;               // unset = the model's default (else 1.0)
  std::optional<int32_t> top_k;              // unset = the model's default (else all)
  std::optional<double> min_p;               // unset = the model's default (else 0)
  std::optional<double> repetition_penalty;  // unset = the model's default (else 1.0)
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;             // stop strings
  std::vector<int32_t> stop_token_ids;       // stop token ids (vLLM extension)
  std::map<int32_t, double> logit_bias;      // token id -> bias, clamped to [-100, 100]
  std::vector<int32_t> allowed_token_ids;    // only these may be sampled (vLLM extension)
  std::optional<int32_t> logprobs;           // top-N logprobs per output token (0 = sampled only)
  std::optional<int32_t> prompt_logprobs;    // top-N logprobs per prompt token (vLLM extension)
  // echo: completions prepend the prompt to each choice (max_tokens may then
  // be 0: the prompt alone); chat prepends the last message's content when
  // the reply continues that message's role (vLLM).
  bool echo = false;
  bool echo_prompt_logprobs = false;         // completions: echo asks for the prompt's logprobs too
  bool ignore_eos = false;
  int32_t min_tokens = 0;
  bool skip_special_tokens = true;
  bool spaces_between_special_tokens = true;
  bool include_stop_str_in_output = false;
  bool return_token_ids = false;             // completions carry prompt_token_ids and token_ids (vLLM)
  bool return_tokens_as_token_ids = false;   // logprob tokens spelled "token_id:N" (vLLM)
  bool stream = false;
  bool include_usage = false;                // stream_options.include_usage
  bool continuous_usage_stats = false;       // stream_options.continuous_usage_stats (vLLM)
  std::string user;                          // end-user id, for logs only
  int32_t priority = 0;                      // lower = scheduled first (priority scheduling)
  std::optional<std::string> cache_salt;     // isolates prefix-cache reuse
  std::optional<std::string> request_id;     // body "request_id" (vLLM extension)
  // vLLM's kv_transfer_params (an object, else null): handed to the engine's
  // KV connector in SamplingParams.extra_args (disaggregated prefill).
  nlohmann::json kv_transfer_params;
  // structured_outputs / response_format / guided_*, validated (structured_outputs_request.h).
  std::optional<proto::StructuredOutputsParams> structured_outputs;
  // vLLM's use_beam_search (beam width n) and its length_penalty (beam_search_request.h).
  bool use_beam_search = false;
  double length_penalty = 1.0;

  bool operator==(const SamplingRequest&) const = default;
};

// Reads the shared fields of a completion or chat request (not max_tokens,
// logprobs or echo, which differ between the two APIs).
MaybeError ReadSamplingFields(FieldReader& reader, const ParseOptions& options, SamplingRequest* out);

// Checks relations between fields once all are read (min_tokens vs max_tokens,
// stream_options without stream, ...).
MaybeError CheckSamplingRequest(const SamplingRequest& request, const nlohmann::json& body);

// The model's generation_config.json defaults, used for fields the client left unset.
struct GenerationDefaults {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int32_t> top_k;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<int32_t> max_tokens;  // server-side cap (vLLM max_new_tokens)
};

// What the conversion needs besides the request.
struct SamplingContext {
  int32_t prompt_tokens = 0;            // length of the tokenized prompt
  int32_t max_model_len = 0;            // context length of the served model
  std::vector<int32_t> eos_token_ids;   // the tokenizer's / generation config's EOS ids
  GenerationDefaults defaults;
};

// Builds the engine's SamplingParams. Fails (400) when the prompt does not fit
// the context or prompt + max_tokens exceeds it. Streams get delta outputs,
// other requests the final output only. A temperature below 1e-5 is greedy
// (top_p 1, top_k all, min_p 0), as in vLLM.
MaybeError ToSamplingParams(const SamplingRequest& request, const SamplingContext& context,
                            proto::SamplingParams* out);

}  // namespace llmserve::frontend::openai
