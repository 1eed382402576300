#pragma once
// Sampling on the GPU for rows that need no logits processing (no penalties,
// bias, allowed ids, grammar mask or logprobs): greedy argmax (the first
// maximum), or the host sampler's order of temperature → min_p → top_k →
// top_p → draw. Only the sampled ids travel back.
//
// Cuts are thresholds on the logit found by bisection, so ties at a top-k
// boundary are all kept (the host keeps the lower ids); the draw walks the
// kept tokens in id order with the row's uniform u, as the host does without
// top-k.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace llmserve::kernels::cuda {

struct SamplingRow {
  int32_t logits_row = 0;   // row of the logits block
  float temperature = 0.f;  // ≤ 1e-5: greedy
  int32_t top_k = 0;        // ≤ 0: off
  float top_p = 1.f;        // 1: off
  float min_p = 0.f;        // 0: off
  float uniform = 0.f;      // the row's draw in [0, 1)
};

// For each of `num_rows` rows: tokens[i] = the sampled id, nan_counts[i] =
// NaNs in its logits row. `logits` is [rows × vocab] fp32; all device memory.
Status SampleRows(const float* logits, size_t vocab, const SamplingRow* rows, size_t num_rows, int32_t* tokens,
                  int32_t* nan_counts, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
