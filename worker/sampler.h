#pragma once
// The batched sampler: one row of logits per request, each sampled
// independently (in parallel across requests) by the request's parameters.
//
// Reproducibility: a request's random draw for output position n comes from
// a counter-based generator keyed by (seed, n) — never from a stream shared
// with other requests — so a seeded request samples the same tokens whatever
// else is in the batch and on every run. Unseeded requests use a seed derived
// from a per-process random seed and the request's id.
//
// Order of operations (vLLM's): the grammar bitmask of a structured-output
// request (which the logprobs see too, as in vLLM), allowed_token_ids mask
// and logit_bias,
// penalties, then greedy argmax, or temperature → min_p → top_k → top_p →
// draw. Logprobs are those of the raw model output (log_softmax of the logits
// before any processing), like vLLM's default "raw_logprobs".

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "worker/sampling_params.h"

namespace llmserve::worker {

// One request's row to sample.
struct SamplerRow {
  const float* logits = nullptr;                 // [vocab]
  const SamplingParams* params = nullptr;
  const std::vector<int32_t>* prompt_tokens = nullptr;  // for the repetition penalty
  const std::vector<int32_t>* output_tokens = nullptr;  // for all penalties
  uint64_t seed = 0;                             // effective seed (see EffectiveSeed)
  uint64_t output_position = 0;                  // index of the token being sampled
  // Structured outputs: the allowed-token row (bit t & 31 of word t >> 5 set
  // = token t allowed; ids past the row are not allowed), or null.
  const int32_t* grammar_mask = nullptr;
  size_t grammar_mask_words = 0;
};

struct SampledToken {
  int32_t token = -1;
  float logprob = 0.0f;                            // raw logprob of `token` (when asked)
  int32_t rank = 0;                                // 1 + tokens with a higher raw logit (when asked)
  std::vector<std::pair<int32_t, float>> top;      // top-N (token, raw logprob), best first
};

class Sampler {
 public:
  // `process_seed` seeds unseeded requests (pass a random value in production).
  explicit Sampler(uint64_t process_seed) : process_seed_(process_seed) {}

  // The seed a request's draws use: its own, or one derived from the process
  // seed and its id.
  uint64_t EffectiveSeed(const SamplingParams& params, const std::string& request_id) const;

  // Samples every row (rows run in parallel; each row's result depends only on the row).
  std::vector<SampledToken> Sample(const std::vector<SamplerRow>& rows, size_t vocab,
                                   kernels::cpu::ThreadPool& pool) const;

  // Samples one row (what Sample does for each).
  static SampledToken SampleRow(const SamplerRow& row, size_t vocab);

  // Samples one row without its grammar mask (SampleRow applies the mask first).
  static SampledToken SampleUnmasked(const SamplerRow& row, size_t vocab);

  // Whether the row's logits are edited before the choice (allowed ids,
  // min_tokens' stop-id mask, logit bias, penalties); the grammar mask aside.
  static bool ProcessesLogits(const SamplerRow& row);

  // The uniform [0, 1) draw for (seed, position).
  static double Uniform(uint64_t seed, uint64_t position);

  // Whether the row is sampled greedily (argmax; temperature ~ 0).
  static bool Greedy(const SamplingParams& sp) { return sp.temperature <= 1e-5f; }

  // For a random (non-greedy) row without a grammar mask: the weights the
  // draw picks from (processed logits, temperature, min_p, top_k, top_p; 0 for
  // dropped tokens), into `*p` [vocab]. Returns their sum (0: no finite logit).
  static double TargetWeights(const SamplerRow& row, size_t vocab, std::vector<double>* p);

  // Fills `out`'s logprob, rank and top entries for `token` when the row asks
  // for logprobs (as SampleRow does for the token it samples).
  static void FillLogprobs(const SamplerRow& row, size_t vocab, int32_t token, SampledToken* out);

 private:
  uint64_t process_seed_;
};

// A random 64-bit seed for this process (from std::random_device).
uint64_t RandomProcessSeed();

}  // namespace llmserve::worker
