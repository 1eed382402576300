#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/rms_norm.h"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void RmsNormKernel(const float* __restrict__ x, const float* __restrict__ weight,
                              float* __restrict__ out, size_t dim, float eps) {
  const float* row = x + blockIdx.x * dim;
  float sum_sq = 0.f;
  for (size_t i = threadIdx.x; i < dim; i += blockDim.x) sum_sq += row[i] * row[i];
  // Warp reduction, then one partial per warp through shared memory.
  for (int offset = 16; offset > 0; offset >>= 1) sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, offset);
  __shared__ float partial[kThreads / 32];
  __shared__ float inv_rms;
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum_sq;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
    inv_rms = rsqrtf(total / static_cast<float>(dim) + eps);
  }
  __syncthreads();
  float* out_row = out + blockIdx.x * dim;
  for (size_t i = threadIdx.x; i < dim; i += blockDim.x) out_row[i] = row[i] * inv_rms * weight[i];
}

}  // namespace

Status RmsNorm(const float* x, const float* weight, float* out, size_t rows, size_t dim, float eps,
               cudaStream_t stream) {
  if (rows == 0) return Status::Ok();
  RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, weight, out, dim, eps);
  return CudaStatus(cudaGetLastError(), "RmsNormKernel launch");
}

}  // namespace llmserve::kernels::cuda
