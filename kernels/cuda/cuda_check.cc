#include "kernels/cuda/cuda_check.h"

namespace llmserve::kernels::cuda {

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

}  // namespace llmserve::kernels::cuda
