#pragma once
// The low-rank update of a LoRA adapter for one projection, over a group of
// rows that use the same adapter (vLLM's "shrink" then "expand"):
//   y[r] += scale · B · (A · x[r])      A: [rank × in], B: [out × rank]
//
// Each row is computed alone, by one thread, in a fixed order (the k-sum of
// the shrink, then the rank-sum of the expand added onto y term by term), so
// a row's result is bitwise the same whichever rows share its group or its
// batch. Math in fp32.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// Adapters wider than this are rejected at load (vLLM's largest --max-lora-rank).
inline constexpr size_t kMaxLoraRank = 512;

// One projection's factors, stored transposed so that both loops run along
// contiguous memory: a_t = Aᵀ [in × rank], b_t = Bᵀ [rank × out].
struct LoraFactors {
  const float* a_t = nullptr;
  const float* b_t = nullptr;
  size_t rank = 0;  // ≤ kMaxLoraRank
  size_t in = 0;
  size_t out = 0;
  float scale = 1.f;
};

// For each of the n rows `rows` (indices into x and y): y row += scale ·
// B·(A·x row). x rows are `x_stride` floats apart, y rows `y_stride` apart
// (y may point into a fused output, at the projection's first column).
void LoraShrinkExpand(const LoraFactors& f, const float* x, size_t x_stride, const int32_t* rows, size_t n,
                      float* y, size_t y_stride, ThreadPool& pool);

// One row, the same arithmetic: the reference the grouped call must equal.
void LoraShrinkExpandRow(const LoraFactors& f, const float* x, float* y);

}  // namespace llmserve::kernels::cpu
