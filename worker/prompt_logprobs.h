#pragma once
// Prompt logprobs (vLLM's prompt_logprobs): for every prompt position p after
// the first, the logprob and rank of prompt token p and the top-k, from the
// logits at position p - 1. A request asks with k >= 0; the runner computes
// the logits of the prompt positions each prefill chunk covers and collects
// the rows here until the prefill is done, as vLLM's GPUModelRunner does
// (_get_prompt_logprobs_dict), so chunked prefill changes nothing.
// Cost: such a request's chunk computes chunk tokens × vocab logits (the
// KV cache profile does not reserve room for them); requests that do not
// ask cost nothing.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "proto/engine_core_output.h"
#include "worker/sampling_params.h"

namespace llmserve::worker {

// How many logits rows a chunk of `n` tokens starting at prompt position
// `start` contributes: the positions in [start, start + n) that predict a
// prompt token (at most num_prompt - 1 - start; none once past the prompt).
size_t PromptLogprobRows(size_t num_prompt, size_t start, size_t n);

// Whether the chunk [start, start + n) finishes the prompt, so that the rows
// collected so far are complete (vLLM: more tokens than the remaining rows).
inline bool FinishesPrompt(size_t num_prompt, size_t start, size_t n) {
  return start < num_prompt && start + n >= num_prompt;
}

// One request's prompt logprobs while its prefill runs: num_prompt - 1 rows
// in vLLM's LogprobsTensors layout (column 0 the prompt token, then the
// top-k best first), filled chunk by chunk.
class PromptLogprobsCollector {
 public:
  PromptLogprobsCollector(int32_t top_k, size_t num_prompt);

  int32_t top_k() const { return top_k_; }
  // Fills rows [first_row, first_row + targets.size()) from consecutive
  // logits rows [targets.size() × vocab]; row i is scored against targets[i]
  // (prompt token first_row + i + 1). A recomputed row (preemption) is
  // written again with the same values. Rows are computed in parallel on
  // `pool`; each depends on its own logits alone.
  void Fill(const float* logits, size_t vocab, size_t first_row, std::span<const int32_t> targets,
            kernels::cpu::ThreadPool& pool);
  // The collected rows; the collector is left empty.
  proto::Logprobs Take() { return std::move(rows_); }

 private:
  void FillRow(const float* logits, size_t vocab, const SamplingParams& params, size_t index, int32_t target);

  int32_t top_k_;
  proto::Logprobs rows_;
};

}  // namespace llmserve::worker
