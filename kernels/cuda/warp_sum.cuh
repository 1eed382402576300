#pragma once
// The sum of a value over the 32 lanes of a warp, known to every lane.

namespace llmserve::kernels::cuda {

template <typename T>
__device__ __forceinline__ T WarpSum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace llmserve::kernels::cuda
