#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemv_bf16.h"
#include "kernels/cuda/warp_sum.cuh"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kUnroll = 8;  // 16-byte weight loads in flight per lane

__device__ float Dot8(const uint4& a, const uint4& b) {
  const auto* pa = reinterpret_cast<const __nv_bfloat162*>(&a);
  const auto* pb = reinterpret_cast<const __nv_bfloat162*>(&b);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = __bfloat1622float2(pa[i]), fb = __bfloat1622float2(pb[i]);
    sum += fa.x * fb.x + fa.y * fb.y;
  }
  return sum;
}

// One warp per output column n; lane l reads 8 weights at k = 8l, 8l + 256, ...
template <int kRows>
__global__ void GemvKernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                           float* __restrict__ y, size_t n, size_t k, bool accumulate) {
  const size_t col = blockIdx.x * static_cast<size_t>(kWarpsPerBlock) + threadIdx.x / 32;
  if (col >= n) return;
  const int lane = threadIdx.x % 32;
  const uint4* wrow = reinterpret_cast<const uint4*>(w + col * k);
  const size_t pieces = k / 8;
  float acc[kRows] = {};
  for (size_t p0 = lane; p0 < pieces; p0 += 32 * kUnroll) {
    uint4 wv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t p = p0 + 32 * u;
      wv[u] = p < pieces ? wrow[p] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t p = p0 + 32 * u;
      if (p >= pieces) break;
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] += Dot8(wv[u], reinterpret_cast<const uint4*>(x + r * k)[p]);
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = WarpSum(acc[r]);
    if (lane == 0) y[r * n + col] = accumulate ? y[r * n + col] + v : v;
  }
}

}  // namespace

Status Gemv(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
            cudaStream_t stream) {
  if (!GemvTakes(rows, k)) return Status::InvalidArgument("Gemv: rows must be 1..4 and k a multiple of 8");
  const unsigned blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  switch (rows) {
    case 1: GemvKernel<1><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(x, w, y, n, k, accumulate); break;
    case 2: GemvKernel<2><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(x, w, y, n, k, accumulate); break;
    case 3: GemvKernel<3><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(x, w, y, n, k, accumulate); break;
    default: GemvKernel<4><<<blocks, kWarpsPerBlock * 32, 0, stream>>>(x, w, y, n, k, accumulate); break;
  }
  return CudaStatus(cudaGetLastError(), "GemvKernel launch");
}

}  // namespace llmserve::kernels::cuda
