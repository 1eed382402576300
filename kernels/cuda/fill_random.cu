#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fill_random.h"

namespace llmserve::kernels::cuda {

namespace {

// splitmix64: a well-mixed 64-bit value per (seed, index).
__device__ uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void FillUniformKernel(__nv_bfloat16* x, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float u = static_cast<float>(Mix(seed ^ Mix(i)) >> 40) * (1.f / 16777216.f);  // [0, 1)
    x[i] = __float2bfloat16((2.f * u - 1.f) * scale);
  }
}

__global__ void FillConstantKernel(float* x, size_t n, float value) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    x[i] = value;
  }
}

constexpr unsigned kBlocks = 1024, kThreads = 256;

}  // namespace

Status FillUniformBf16(__nv_bfloat16* x, size_t n, uint64_t seed, float scale, cudaStream_t stream) {
  if (n == 0) return Status::Ok();
  FillUniformKernel<<<kBlocks, kThreads, 0, stream>>>(x, n, seed, scale);
  return CudaStatus(cudaGetLastError(), "FillUniformKernel launch");
}

Status FillConstantF32(float* x, size_t n, float value, cudaStream_t stream) {
  if (n == 0) return Status::Ok();
  FillConstantKernel<<<kBlocks, kThreads, 0, stream>>>(x, n, value);
  return CudaStatus(cudaGetLastError(), "FillConstantKernel launch");
}

}  // namespace llmserve::kernels::cuda
