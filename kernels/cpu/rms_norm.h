#pragma once
// RMSNorm over rows, multi-threaded by rows. Each row is reduced by one thread
// in a fixed order, so a row's result never depends on the other rows.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// out[r][i] = x[r][i] / sqrt(mean_i(x[r]^2) + eps) * weight[i] for `rows` rows of
// `dim` floats; x rows are `x_stride` apart, out rows `out_stride` apart. `out`
// may alias `x` (same stride).
void RmsNorm(const float* x, size_t x_stride, const float* weight, float* out, size_t out_stride,
             size_t rows, size_t dim, float eps, ThreadPool& pool);

// Single-threaded form of the same computation (same bits), for small calls.
void RmsNormRows(const float* x, size_t x_stride, const float* weight, float* out,
                 size_t out_stride, size_t rows, size_t dim, float eps);

// RmsNorm's output rounded to bf16 straight into the tiled A layout of
// gemm_amx.h (`a` holds LinearWeight::TiledInputElements(rows) of a weight
// with dim inputs): the same bits as amx::ConvertRows of RmsNorm's output,
// without writing and re-reading the fp32 rows. Feeds
// LinearWeight::ApplyTiled. Requires Isa::kAvx512 or better.
void RmsNormTiled(const float* x, size_t x_stride, const float* weight, size_t rows, size_t dim, float eps,
                  uint16_t* a, ThreadPool& pool);

}  // namespace llmserve::kernels::cpu
