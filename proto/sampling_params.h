#pragma once
// SamplingParams: how to pick each next token and when to stop, as a client
// asked for it. Encoded as a msgpack map keyed by vLLM's field names with
// default-valued fields omitted (msgspec omit_defaults).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/encoded_value.h"
#include "proto/structured_outputs_params.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

// What the frontend wants streamed back (vLLM RequestOutputKind).
enum class OutputKind : int32_t { kCumulative = 0, kDelta = 1, kFinalOnly = 2 };

struct SamplingParams {
  int32_t n = 1;                      // completions per prompt
  double presence_penalty = 0.0;      // subtract when a token has appeared
  double frequency_penalty = 0.0;     // subtract per appearance
  double repetition_penalty = 1.0;    // divide positive / multiply negative logits of seen tokens
  double temperature = 1.0;           // 0 = greedy
  double top_p = 1.0;                 // nucleus mass
  int32_t top_k = 0;                  // 0 or -1 = all tokens
  double min_p = 0.0;                 // drop tokens below min_p * p(max)
  std::optional<int64_t> seed;        // per-request RNG seed
  std::vector<std::string> stop;      // stop strings (matched by the frontend)
  std::vector<int32_t> stop_token_ids;  // stop when one of these is sampled
  bool ignore_eos = false;            // keep going after EOS
  std::optional<int32_t> max_tokens = 16;  // output tokens at most; nullopt = up to max_model_len
  int32_t min_tokens = 0;             // EOS / stop ids suppressed before this many
  std::optional<int32_t> logprobs;    // top-N logprobs per output token
  std::optional<int32_t> prompt_logprobs;  // top-N logprobs per prompt token
  bool detokenize = true;
  bool skip_special_tokens = true;
  bool spaces_between_special_tokens = true;
  bool include_stop_str_in_output = false;
  OutputKind output_kind = OutputKind::kCumulative;
  std::optional<StructuredOutputsParams> structured_outputs;  // constrained output, if any
  std::map<int32_t, double> logit_bias;      // token id -> added to its logit
  std::vector<int32_t> allowed_token_ids;    // if non-empty, only these may be sampled
  std::vector<int32_t> all_stop_token_ids;   // EOS ids + stop_token_ids, set by the frontend
  // vLLM's extra_args: a map for extensions; its "kv_transfer_params" entry is
  // the request's KV-transfer parameters (engine_core/kv_connector/).
  EncodedValue extra_args;

  bool operator==(const SamplingParams&) const = default;
};

void Pack(wire::Packer& p, const SamplingParams& v);
Status Read(const msgpack::object& o, std::string_view field, SamplingParams* out);

}  // namespace llmserve::proto
