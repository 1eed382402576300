#pragma once
// Per-request sampling parameters, as the model runner's sampler uses them
// (OpenAI / vLLM semantics).

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace llmserve::worker {

struct SamplingParams {
  float temperature = 1.0f;            // ≤ 1e-5: greedy
  int32_t top_k = 0;                   // ≤ 0: off
  float top_p = 1.0f;                  // 1: off
  float min_p = 0.0f;                  // 0: off; keep tokens with p ≥ min_p · p_max
  std::optional<uint64_t> seed;        // per-request seed; none: the process's random seed
  float repetition_penalty = 1.0f;     // tokens seen in prompt or output: l>0 ? l/r : l*r
  float presence_penalty = 0.0f;       // l -= presence · [count_in_output > 0]
  float frequency_penalty = 0.0f;      // l -= frequency · count_in_output
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to the logits first
  std::vector<int32_t> allowed_token_ids;             // empty: all allowed
  int32_t logprobs = -1;               // < 0: none; N ≥ 0: sampled token + top N candidates
  int32_t min_tokens = 0;              // stop_token_ids are masked until this many outputs
  std::vector<int32_t> stop_token_ids;  // EOS + stop ids (what min_tokens suppresses)
};

}  // namespace llmserve::worker
