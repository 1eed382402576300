#pragma once
// The small kernels between the CUDA forward pass's matmuls: embedding rows,
// RMSNorm into bf16 matmul input, the q/k/v step (bias, q/k norm, rotary
// embedding, K/V cache write) and SiLU-and-mul. Device pointers throughout;
// each call enqueues on `stream` and returns the launch status.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace llmserve::kernels::cuda {

using Bf16 = __nv_bfloat16;

// out[t] = table[ids[t]] as fp32 ([rows × dim]).
Status EmbeddingToF32(const Bf16* table, const int32_t* ids, size_t rows, size_t dim, float* out, cudaStream_t stream);

// out[r] = RMSNorm(x[src(r)]) * weight rounded to bf16, where src(r) is
// row_index[r] when row_index is given, else r.
Status RmsNormToBf16(const float* x, const int32_t* row_index, const float* weight, Bf16* out, size_t rows, size_t dim,
                     float eps, cudaStream_t stream);

// y[r][i] += bias[i].
Status AddBias(float* y, const float* bias, size_t rows, size_t n, cudaStream_t stream);

// out[r][i] = silu(gate_up[r][i]) * gate_up[r][ff + i] rounded to bf16.
Status SiluMulToBf16(const float* gate_up, size_t rows, size_t ff, Bf16* out, cudaStream_t stream);

// The fused q/k/v step of one layer, token by token, in place on fp32 rows
// of [q heads | k heads | v heads] × head_dim:
//   + bias (when given), per-head RMSNorm of q and k (when q_norm is given),
//   rotary embedding of q and k at positions[t] (NeoX pairs (i, i + hd/2),
//   cos/sin read from tables of [max_positions × hd/2]), then k and v
//   rounded to bf16 into the paged cache at slot_mapping[t] (skipped when
//   negative). Cache layout: [block][kv_head][slot in block][head_dim].
struct QkvStepArgs {
  float* qkv = nullptr;
  size_t tokens = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0;
  const float* bias = nullptr;    // [(heads + 2 kv_heads) × head_dim] or null
  const float* q_norm = nullptr;  // [head_dim] or null
  const float* k_norm = nullptr;  // [head_dim], with q_norm
  float eps = 1e-6f;
  const float* rope_cos = nullptr;  // [max_positions × head_dim / 2]
  const float* rope_sin = nullptr;
  const int32_t* positions = nullptr;     // [tokens]
  const int64_t* slot_mapping = nullptr;  // [tokens]
  Bf16* k_cache = nullptr;                // this layer's pools
  Bf16* v_cache = nullptr;
  size_t block_size = 0;
};
Status QkvStep(const QkvStepArgs& args, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
