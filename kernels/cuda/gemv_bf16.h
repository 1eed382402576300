#pragma once
// y[rows × n] (= or +=) x[rows × k] · w[n × k]ᵀ for a handful of rows (a
// small decode batch): a warp per output column streams its weight row with
// 16-byte loads, so the step runs at the speed of reading the weights. The
// bf16 matmul wrapper (gemm_bf16.h) sends such shapes here.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace llmserve::kernels::cuda {

inline constexpr size_t kGemvMaxRows = 4;

// How the GEMVs below spread their work, process-wide: read at each launch,
// so a captured CUDA graph keeps what it saw. The defaults are the
// ones llmserve-cuda-bench --ablate measured best; the others are there to be
// measured against them.
struct GemvTuning {
  // Each warp loads its first weights into registers before it waits for
  // the kernel before it (programmatic_launch.h) and before the rows are
  // normed into shared memory, so that their latency overlaps those.
  bool early_weight_loads = true;
  // Warps sharing an output column, each summing a contiguous part of k (1,
  // 2 or 4). The order of a column's sum follows it, never the number of
  // rows, so batch invariance holds under any one setting.
  int warps_per_column = 2;
};

// InvalidArgument (and nothing changed) for another warps_per_column.
Status SetGemvTuning(const GemvTuning& tuning);
GemvTuning CurrentGemvTuning();

// Whether Gemv takes the shape: rows in 1..kGemvMaxRows, k a multiple of 8.
inline bool GemvTakes(size_t rows, size_t k) { return rows >= 1 && rows <= kGemvMaxRows && k % 8 == 0; }

Status Gemv(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
            cudaStream_t stream);

// The variants below fuse the RMSNorm before the matmul (and, for the MLP,
// the SiLU-and-mul after it) into one kernel for a decode step: each block
// normalises the rows into shared memory as bf16, then its warps stream
// weight rows as Gemv does. They compute bit for bit what RmsNormToBf16
// (transformer_ops.h) followed by Gemv (and SiluMulToBf16) computes.

// Shared memory the normed rows (rows · k bf16) may take: 4 rows of 12,288,
// 1 row of 49,152. Larger shapes take the unfused path.
inline constexpr size_t kGemvRmsNormMaxSharedBytes = size_t{96} << 10;

// Whether GemvRmsNorm and GemvRmsNormSiluMul take the shape: GemvTakes and
// the normed rows fit in kGemvRmsNormMaxSharedBytes.
inline bool GemvRmsNormTakes(size_t rows, size_t k) {
  return GemvTakes(rows, k) && rows * k * sizeof(__nv_bfloat16) <= kGemvRmsNormMaxSharedBytes;
}

// y[rows × n] (= or +=) xn · w[n × k]ᵀ, where xn[r] = RMSNorm(x[src(r)]) *
// norm_weight rounded to bf16 (x fp32 rows of k, norm_weight [k] fp32) and
// src(r) is row_index[r] when row_index is given, else r. y must not
// overlap x (blocks still read x while others write y).
Status GemvRmsNorm(const float* x, const int32_t* row_index, const float* norm_weight, float eps,
                   const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
                   cudaStream_t stream);

// act[rows × ff] = silu(xn · gateᵀ) * (xn · upᵀ) rounded to bf16, where w is
// [2·ff × k] (gate rows, then up rows) and xn[r] = RMSNorm(x[r]) *
// norm_weight rounded to bf16.
Status GemvRmsNormSiluMul(const float* x, const float* norm_weight, float eps, const __nv_bfloat16* w,
                          __nv_bfloat16* act, size_t rows, size_t ff, size_t k, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
