#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/transformer_ops.h"
#include "kernels/cuda/warp_sum.cuh"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kThreads = 256;

// Sum over the block (kThreads threads); every thread gets the total.
__device__ float BlockSum(float v) {
  __shared__ float partial[kThreads / 32];
  __shared__ float total;
  v = WarpSum(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) s += partial[w];
    total = s;
  }
  __syncthreads();
  return total;
}

__global__ void EmbeddingKernel(const Bf16* __restrict__ table, const int32_t* __restrict__ ids, size_t dim,
                                float* __restrict__ out) {
  const Bf16* row = table + static_cast<size_t>(ids[blockIdx.x]) * dim;
  float* dst = out + blockIdx.x * dim;
#pragma unroll 4
  for (size_t i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = __bfloat162float(row[i]);
}

// Values per thread RmsNormToBf16Kernel keeps in registers between its two
// passes (rows up to kThreads · kNormHeld elements).
constexpr int kNormHeld = 32;

__global__ void RmsNormToBf16Kernel(const float* __restrict__ x, const int32_t* __restrict__ row_index,
                                    const float* __restrict__ weight, Bf16* __restrict__ out, size_t dim, float eps) {
  const size_t src = row_index ? static_cast<size_t>(row_index[blockIdx.x]) : blockIdx.x;
  const float* row = x + src * dim;
  Bf16* dst = out + blockIdx.x * dim;
  // The row's values are loaded once (all loads in flight together) and
  // kept for the second pass, where it fits.
  float held[kNormHeld];
  float sum_sq = 0.f;
#pragma unroll
  for (int k = 0; k < kNormHeld; ++k) {
    const size_t i = threadIdx.x + static_cast<size_t>(k) * kThreads;
    held[k] = i < dim ? row[i] : 0.f;
    sum_sq += held[k] * held[k];
  }
  for (size_t i = threadIdx.x + static_cast<size_t>(kNormHeld) * kThreads; i < dim; i += kThreads)
    sum_sq += row[i] * row[i];
  const float inv_rms = rsqrtf(BlockSum(sum_sq) / static_cast<float>(dim) + eps);
#pragma unroll
  for (int k = 0; k < kNormHeld; ++k) {
    const size_t i = threadIdx.x + static_cast<size_t>(k) * kThreads;
    if (i < dim) dst[i] = __float2bfloat16(held[k] * inv_rms * weight[i]);
  }
  for (size_t i = threadIdx.x + static_cast<size_t>(kNormHeld) * kThreads; i < dim; i += kThreads)
    dst[i] = __float2bfloat16(row[i] * inv_rms * weight[i]);
}

__global__ void AddBiasKernel(float* __restrict__ y, const float* __restrict__ bias, size_t n) {
  float* row = y + blockIdx.x * n;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) row[i] += bias[i];
}

// Grid-stride over all rows × ff outputs, so one row still fills the GPU.
__global__ void SiluMulKernel(const float* __restrict__ gate_up, size_t rows, size_t ff, Bf16* __restrict__ out) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < rows * ff;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t r = i / ff, c = i % ff;
    const float g = gate_up[r * 2 * ff + c], u = gate_up[r * 2 * ff + ff + c];
    out[i] = __float2bfloat16(g / (1.f + expf(-g)) * u);
  }
}

// Grid (tokens, head groups): one warp per (token, head).
__global__ void QkvStepKernel(QkvStepArgs a) {
  WaitForPriorGrid();
  LetDependentsLaunch();
  const size_t t = blockIdx.x, hd = a.head_dim, half = hd / 2;
  const size_t nh = a.num_heads, nkv = a.num_kv_heads, heads = nh + 2 * nkv;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  float* row = a.qkv + t * heads * hd;
  const int32_t pos = a.positions[t];
  const int64_t slot = a.slot_mapping[t];
  for (size_t h = blockIdx.y * warps + warp; h < heads; h += gridDim.y * warps) {
    float* v = row + h * hd;
    if (a.bias) {
      for (size_t d = lane; d < hd; d += 32) v[d] += a.bias[h * hd + d];
    }
    const bool is_v = h >= nh + nkv;
    if (!is_v && a.q_norm) {
      const float* w = h < nh ? a.q_norm : a.k_norm;
      __syncwarp();
      float sum_sq = 0.f;
      for (size_t d = lane; d < hd; d += 32) sum_sq += v[d] * v[d];
      const float inv_rms = rsqrtf(WarpSum(sum_sq) / static_cast<float>(hd) + a.eps);
      for (size_t d = lane; d < hd; d += 32) v[d] = v[d] * inv_rms * w[d];
    }
    __syncwarp();
    if (!is_v) {
      const float* c = a.rope_cos + static_cast<size_t>(pos) * half;
      const float* s = a.rope_sin + static_cast<size_t>(pos) * half;
      for (size_t i = lane; i < half; i += 32) {
        const float x0 = v[i], x1 = v[i + half];
        v[i] = x0 * c[i] - x1 * s[i];
        v[i + half] = x1 * c[i] + x0 * s[i];
      }
      __syncwarp();
    }
    if (h >= nh && slot >= 0) {
      const size_t g = is_v ? h - nh - nkv : h - nh;
      const size_t block = static_cast<size_t>(slot) / a.block_size, offset = static_cast<size_t>(slot) % a.block_size;
      Bf16* dst = (is_v ? a.v_cache : a.k_cache) + ((block * nkv + g) * a.block_size + offset) * hd;
      for (size_t d = lane; d < hd; d += 32) dst[d] = __float2bfloat16(v[d]);
    }
  }
}

}  // namespace

Status EmbeddingToF32(const Bf16* table, const int32_t* ids, size_t rows, size_t dim, float* out, cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  EmbeddingKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(table, ids, dim, out);
  return CudaStatus(cudaGetLastError(), "EmbeddingKernel launch");
}

Status RmsNormToBf16(const float* x, const int32_t* row_index, const float* weight, Bf16* out, size_t rows, size_t dim,
                     float eps, cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  RmsNormToBf16Kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, row_index, weight, out, dim, eps);
  return CudaStatus(cudaGetLastError(), "RmsNormToBf16Kernel launch");
}

Status AddBias(float* y, const float* bias, size_t rows, size_t n, cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  AddBiasKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(y, bias, n);
  return CudaStatus(cudaGetLastError(), "AddBiasKernel launch");
}

Status SiluMulToBf16(const float* gate_up, size_t rows, size_t ff, Bf16* out, cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  const size_t blocks = std::min<size_t>((rows * ff + kThreads - 1) / kThreads, 4096);
  SiluMulKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(gate_up, rows, ff, out);
  return CudaStatus(cudaGetLastError(), "SiluMulKernel launch");
}

Status QkvStep(const QkvStepArgs& args, cudaStream_t stream) {
  if (args.tokens == 0) return Status::Ok();
  if (args.head_dim % 2 != 0) return Status::InvalidArgument("QkvStep: head_dim must be even");
  const size_t heads = args.num_heads + 2 * args.num_kv_heads;
  const dim3 grid(static_cast<unsigned>(args.tokens), static_cast<unsigned>((heads + 3) / 4));
  return CudaStatus(LaunchKernel(LaunchGroup::kAttention, QkvStepKernel, grid, dim3(128), 0, stream, args),
                    "QkvStepKernel launch");
}

}  // namespace llmserve::kernels::cuda
