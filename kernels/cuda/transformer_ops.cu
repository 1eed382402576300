#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/transformer_ops.h"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kThreads = 256;

__device__ float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

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
  for (size_t i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = __bfloat162float(row[i]);
}

__global__ void RmsNormToBf16Kernel(const float* __restrict__ x, const int32_t* __restrict__ row_index,
                                    const float* __restrict__ weight, Bf16* __restrict__ out, size_t dim,
                                    float eps) {
  const size_t src = row_index ? static_cast<size_t>(row_index[blockIdx.x]) : blockIdx.x;
  const float* row = x + src * dim;
  float sum_sq = 0.f;
  for (size_t i = threadIdx.x; i < dim; i += blockDim.x) sum_sq += row[i] * row[i];
  const float inv_rms = rsqrtf(BlockSum(sum_sq) / static_cast<float>(dim) + eps);
  Bf16* dst = out + blockIdx.x * dim;
  for (size_t i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = __float2bfloat16(row[i] * inv_rms * weight[i]);
}

__global__ void AddBiasKernel(float* __restrict__ y, const float* __restrict__ bias, size_t n) {
  float* row = y + blockIdx.x * n;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) row[i] += bias[i];
}

__global__ void SiluMulKernel(const float* __restrict__ gate_up, size_t ff, Bf16* __restrict__ out) {
  const float* g = gate_up + blockIdx.x * 2 * ff;
  const float* u = g + ff;
  Bf16* dst = out + blockIdx.x * ff;
  for (size_t i = threadIdx.x; i < ff; i += blockDim.x) dst[i] = __float2bfloat16(g[i] / (1.f + expf(-g[i])) * u[i]);
}

// One block per token, one warp per head at a time.
__global__ void QkvStepKernel(QkvStepArgs a) {
  const size_t t = blockIdx.x, hd = a.head_dim, half = hd / 2;
  const size_t nh = a.num_heads, nkv = a.num_kv_heads, heads = nh + 2 * nkv;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  float* row = a.qkv + t * heads * hd;
  const int32_t pos = a.positions[t];
  const int64_t slot = a.slot_mapping[t];
  for (size_t h = warp; h < heads; h += warps) {
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

Status EmbeddingToF32(const Bf16* table, const int32_t* ids, size_t rows, size_t dim, float* out,
                      cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  EmbeddingKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(table, ids, dim, out);
  return CudaStatus(cudaGetLastError(), "EmbeddingKernel launch");
}

Status RmsNormToBf16(const float* x, const int32_t* row_index, const float* weight, Bf16* out, size_t rows,
                     size_t dim, float eps, cudaStream_t stream) {
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
  SiluMulKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(gate_up, ff, out);
  return CudaStatus(cudaGetLastError(), "SiluMulKernel launch");
}

Status QkvStep(const QkvStepArgs& args, cudaStream_t stream) {
  if (args.tokens == 0) return Status::Ok();
  if (args.head_dim % 2 != 0) return Status::InvalidArgument("QkvStep: head_dim must be even");
  QkvStepKernel<<<static_cast<unsigned>(args.tokens), 128, 0, stream>>>(args);
  return CudaStatus(cudaGetLastError(), "QkvStepKernel launch");
}

}  // namespace llmserve::kernels::cuda
