#pragma once
// The low-rank update of a LoRA adapter for one projection, over the rows of
// a batch grouped by adapter (vLLM's "shrink" then "expand"):
//   y[r] += scale · B · (A · x[r])      A: [rank × in], B: [out × rank]
//
// Arithmetic (fixed, so every path and blocking gives the same bits):
//   t[i] = 0; for k = 0..in-1: t[i] = fma(Aᵀ[k][i], x[k], t[i]);  t[i] *= scale
//   for i = 0..rank-1: y[j] = fma(Bᵀ[i][j], t[i], y[j])
// Each element is one chain of fused multiply-adds in index order, so the
// scalar, AVX2 and AVX-512 paths agree bit for bit, and a row's result does
// not depend on which rows share its block, group, batch or thread.
//
// The fast paths take up to four rows of one adapter at a time, so each
// factor is read once per four rows, and spread the row blocks of every
// group over the thread pool in one round.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// Adapters wider than this are rejected at load (vLLM's largest --max-lora-rank).
inline constexpr size_t kMaxLoraRank = 512;

// How the factors are stored. bf16 holds an adapter saved in bf16 exactly
// in half the bytes; each element is widened to fp32 before its fma, so the
// arithmetic (and result) is that of the same values stored as fp32.
enum class LoraDType { kF32, kBF16 };

// One projection's factors, stored transposed so that both loops run along
// contiguous memory: a_t = Aᵀ [in × rank], b_t = Bᵀ [rank × out], elements
// float or uint16_t (bf16 bits) as `dtype` says.
struct LoraFactors {
  const void* a_t = nullptr;
  const void* b_t = nullptr;
  size_t rank = 0;  // ≤ kMaxLoraRank
  size_t in = 0;
  size_t out = 0;
  float scale = 1.f;
  LoraDType dtype = LoraDType::kF32;
};

// The rows of a batch that use one adapter: indices into x and y.
struct LoraGroup {
  LoraFactors f;
  const int32_t* rows = nullptr;
  size_t n = 0;
};

// For every group g and each of its rows r: y row r += g's update of x row r.
// x rows are `x_stride` floats apart, y rows `y_stride` apart (y may point
// into a fused output, at the projection's first column). All groups share
// `in` and `out`; no row may be in two groups. One pool round.
void LoraApplyGroups(const LoraGroup* groups, size_t num_groups, const float* x, size_t x_stride, float* y,
                     size_t y_stride, ThreadPool& pool);

// One group: LoraApplyGroups(&{f, rows, n}, 1, ...).
void LoraShrinkExpand(const LoraFactors& f, const float* x, size_t x_stride, const int32_t* rows, size_t n,
                      float* y, size_t y_stride, ThreadPool& pool);

// One row, the arithmetic above written plainly: the reference the fast
// paths must equal bit for bit.
void LoraShrinkExpandRow(const LoraFactors& f, const float* x, float* y);

}  // namespace llmserve::kernels::cpu
