#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/read_sweep.h"

namespace llmserve::kernels::cuda {

namespace {

__global__ void ReadSweepKernel(const uint4* __restrict__ data, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

}  // namespace

Status ReadSweep(const void* data, size_t bytes, unsigned* sink, cudaStream_t stream) {
  int device = 0, sms = 0;
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  ReadSweepKernel<<<static_cast<unsigned>(sms) * 8, 512, 0, stream>>>(static_cast<const uint4*>(data), bytes / 16,
                                                                      sink);
  return CudaStatus(cudaGetLastError(), "ReadSweepKernel launch");
}

}  // namespace llmserve::kernels::cuda
