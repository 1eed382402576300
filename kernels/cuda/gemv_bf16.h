#pragma once
// y[rows × n] (= or +=) x[rows × k] · w[n × k]ᵀ for a handful of rows (a
// small decode batch): a warp per output column streams its weight row with
// 16-byte loads, so the step runs at the speed of reading the weights. The
// bf16 matmul wrapper (gemm_bf16.h) sends such shapes here.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "base/status.h"

namespace llmserve::kernels::cuda {

inline constexpr size_t kGemvMaxRows = 4;

// Whether Gemv takes the shape: rows in 1..kGemvMaxRows, k a multiple of 8.
inline bool GemvTakes(size_t rows, size_t k) { return rows >= 1 && rows <= kGemvMaxRows && k % 8 == 0; }

Status Gemv(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
            cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
