#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemv_bf16.h"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/warp_sum.cuh"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kThreads = kWarpsPerBlock * 32;
constexpr int kUnroll = 8;  // 16-byte weight loads in flight per lane
// Blocks per SM the fused-norm kernels launch at most: each block normalises
// the rows once, then loops over columns.
constexpr size_t kRmsNormBlocksPerSm = 4;

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

// acc[r] += this lane's share of wrow · x[r] (x: kRows rows of k, global or
// shared memory); lane l reads 8 weights at k = 8l, 8l + 256, ...
template <int kRows>
__device__ __forceinline__ void DotRows(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w_row,
                                        size_t k, int lane, float (&acc)[kRows]) {
  const uint4* wrow = reinterpret_cast<const uint4*>(w_row);
  const size_t pieces = k / 8;
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
}

// One warp per output column n.
template <int kRows>
__global__ void GemvKernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                           float* __restrict__ y, size_t n, size_t k, bool accumulate) {
  const size_t col = blockIdx.x * static_cast<size_t>(kWarpsPerBlock) + threadIdx.x / 32;
  if (col >= n) return;
  const int lane = threadIdx.x % 32;
  float acc[kRows] = {};
  DotRows<kRows>(x, w + col * k, k, lane, acc);
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float v = WarpSum(acc[r]);
    if (lane == 0) y[r * n + col] = accumulate ? y[r * n + col] + v : v;
  }
}

// xs[r] = RMSNorm(x[src(r)]) * weight rounded to bf16, for the whole block.
// The sum of squares is RmsNormToBf16Kernel's (transformer_ops.cu, also 256
// threads): thread t sums i = t, t + 256, ... in order, then the warp sums
// are added in warp order. Same floats in, same inv_rms and bf16 rows out.
static_assert(kThreads == 256, "the norm's reduction order is RmsNormToBf16Kernel's 256 threads");
template <int kRows>
__device__ void NormRowsToShared(const float* __restrict__ x, const int32_t* __restrict__ row_index,
                                 const float* __restrict__ weight, float eps, size_t k, __nv_bfloat16* xs) {
  __shared__ float partial[kRows][kWarpsPerBlock];
  const float* row[kRows];
  float sum_sq[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    row[r] = x + (row_index ? static_cast<size_t>(row_index[r]) : static_cast<size_t>(r)) * k;
    sum_sq[r] = 0.f;
  }
  for (size_t i = threadIdx.x; i < k; i += kThreads) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const float v = row[r][i];
      sum_sq[r] += v * v;
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float s = WarpSum(sum_sq[r]);
    if (threadIdx.x % 32 == 0) partial[r][threadIdx.x / 32] = s;
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float total = 0.f;
    for (int w = 0; w < kWarpsPerBlock; ++w) total += partial[r][w];
    const float inv_rms = rsqrtf(total / static_cast<float>(k) + eps);
    for (size_t i = threadIdx.x; i < k; i += kThreads) xs[r * k + i] = __float2bfloat16(row[r][i] * inv_rms * weight[i]);
  }
  __syncthreads();
}

struct RmsNormArgs {
  const __nv_bfloat16* x_bf16 = nullptr;  // when set: rows already in bf16, copied as they are (no norm)
  const float* x = nullptr;
  const int32_t* row_index = nullptr;
  const float* norm_weight = nullptr;
  float eps = 0.f;
  const __nv_bfloat16* w = nullptr;
  float* y = nullptr;          // [rows × n] (plain variant)
  __nv_bfloat16* act = nullptr;  // [rows × n] (SiLU variant, n = ff)
  size_t n = 0, k = 0;
  bool accumulate = false;
};

// The normed rows (or with x_bf16 the rows as given) in dynamic shared
// memory, then a warp per column over columns blockIdx.x · 8 + warp,
// stepping by the grid. kSiluMul: column j's warp takes gate row j and up
// row n + j and writes act.
template <int kRows, bool kSiluMul>
__global__ void GemvRmsNormKernel(RmsNormArgs a) {
  WaitForPriorGrid();
  LetDependentsLaunch();
  extern __shared__ uint4 shared_rows[];  // uint4: 16-byte aligned rows
  auto* xs = reinterpret_cast<__nv_bfloat16*>(shared_rows);
  if (a.x_bf16) {
    const uint4* src = reinterpret_cast<const uint4*>(a.x_bf16);
    for (size_t i = threadIdx.x; i < kRows * a.k / 8; i += kThreads) shared_rows[i] = src[i];
    __syncthreads();
  } else {
    NormRowsToShared<kRows>(a.x, a.row_index, a.norm_weight, a.eps, a.k, xs);
  }
  const int lane = threadIdx.x % 32;
  const size_t step = static_cast<size_t>(gridDim.x) * kWarpsPerBlock;
  for (size_t col = blockIdx.x * static_cast<size_t>(kWarpsPerBlock) + threadIdx.x / 32; col < a.n; col += step) {
    float acc[kRows] = {};
    DotRows<kRows>(xs, a.w + col * a.k, a.k, lane, acc);
    if constexpr (kSiluMul) {
      float up[kRows] = {};
      DotRows<kRows>(xs, a.w + (a.n + col) * a.k, a.k, lane, up);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float g = WarpSum(acc[r]), u = WarpSum(up[r]);
        // SiluMulKernel's formula (transformer_ops.cu).
        if (lane == 0) a.act[r * a.n + col] = __float2bfloat16(g / (1.f + expf(-g)) * u);
      }
    } else {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float v = WarpSum(acc[r]);
        if (lane == 0) a.y[r * a.n + col] = a.accumulate ? a.y[r * a.n + col] + v : v;
      }
    }
  }
}

// The current device's SM count, read once (0 where it cannot be read: the
// grid is then not capped).
size_t NumSms() {
  static const size_t sms = []() -> size_t {
    int device = 0, n = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
    return static_cast<size_t>(n);
  }();
  return sms;
}

template <int kRows, bool kSiluMul>
Status LaunchRmsNorm(const RmsNormArgs& a, cudaStream_t stream) {
  // Once per instantiation, outside any graph capture (the first call of a
  // shape is eager).
  static const cudaError_t configured =
      cudaFuncSetAttribute(GemvRmsNormKernel<kRows, kSiluMul>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(kGemvRmsNormMaxSharedBytes));
  LLMSERVE_RETURN_IF_ERROR(CudaStatus(configured, "GemvRmsNormKernel shared memory"));
  if (a.n == 0) return Status::Ok();
  const size_t shared = kRows * a.k * sizeof(__nv_bfloat16);
  const size_t groups = (a.n + kWarpsPerBlock - 1) / kWarpsPerBlock;
  // Only as many blocks as are resident at once (registers and shared
  // memory allow), up to kRmsNormBlocksPerSm per SM: a block that waited
  // for a slot would then run its whole share of columns after the others.
  // The occupancy query (host-side, safe inside a capture) is asked once
  // per shared-memory size, not on every decode step.
  static std::mutex mu;
  static std::unordered_map<size_t, int> resident_for_shared;
  int resident = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = resident_for_shared.find(shared);
    if (it == resident_for_shared.end()) {
      LLMSERVE_RETURN_IF_ERROR(CudaStatus(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                              &resident, GemvRmsNormKernel<kRows, kSiluMul>, kThreads, shared),
                                          "GemvRmsNormKernel occupancy"));
      it = resident_for_shared.emplace(shared, resident).first;
    }
    resident = it->second;
  }
  const size_t per_sm = std::clamp<size_t>(static_cast<size_t>(resident), 1, kRmsNormBlocksPerSm);
  const size_t blocks = NumSms() > 0 ? std::min(groups, NumSms() * per_sm) : groups;
  // A programmatic dependent launch (programmatic_launch.h): the blocks are
  // resident and waiting when the kernel before ends.
  return CudaStatus(LaunchKernel(LaunchGroup::kGemv, GemvRmsNormKernel<kRows, kSiluMul>,
                                 dim3(static_cast<unsigned>(blocks)), dim3(kThreads), shared, stream, a),
                    "GemvRmsNormKernel launch");
}

// The arguments both fused variants share.
RmsNormArgs NormedRowsArgs(const float* x, const float* norm_weight, float eps, const __nv_bfloat16* w, size_t n,
                           size_t k) {
  RmsNormArgs a;
  a.x = x;
  a.norm_weight = norm_weight;
  a.eps = eps;
  a.w = w;
  a.n = n;
  a.k = k;
  return a;
}

template <bool kSiluMul>
Status LaunchRmsNorm(const RmsNormArgs& a, size_t rows, cudaStream_t stream) {
  switch (rows) {
    case 1: return LaunchRmsNorm<1, kSiluMul>(a, stream);
    case 2: return LaunchRmsNorm<2, kSiluMul>(a, stream);
    case 3: return LaunchRmsNorm<3, kSiluMul>(a, stream);
    default: return LaunchRmsNorm<4, kSiluMul>(a, stream);
  }
}

}  // namespace

Status Gemv(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
            cudaStream_t stream) {
  if (!GemvTakes(rows, k)) return Status::InvalidArgument("Gemv: rows must be 1..4 and k a multiple of 8");
  if (GemvRmsNormTakes(rows, k)) {
    // The rows fit in shared memory: the fused kernels' layout, without the norm.
    RmsNormArgs a;
    a.x_bf16 = x;
    a.w = w;
    a.y = y;
    a.n = n;
    a.k = k;
    a.accumulate = accumulate;
    return LaunchRmsNorm<false>(a, rows, stream);
  }
  const unsigned blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  switch (rows) {
    case 1: GemvKernel<1><<<blocks, kThreads, 0, stream>>>(x, w, y, n, k, accumulate); break;
    case 2: GemvKernel<2><<<blocks, kThreads, 0, stream>>>(x, w, y, n, k, accumulate); break;
    case 3: GemvKernel<3><<<blocks, kThreads, 0, stream>>>(x, w, y, n, k, accumulate); break;
    default: GemvKernel<4><<<blocks, kThreads, 0, stream>>>(x, w, y, n, k, accumulate); break;
  }
  return CudaStatus(cudaGetLastError(), "GemvKernel launch");
}

Status GemvRmsNorm(const float* x, const int32_t* row_index, const float* norm_weight, float eps,
                   const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
                   cudaStream_t stream) {
  if (!GemvRmsNormTakes(rows, k))
    return Status::InvalidArgument("GemvRmsNorm: rows must be 1..4, k a multiple of 8 and rows·k bf16 fit in 96 KiB");
  RmsNormArgs a = NormedRowsArgs(x, norm_weight, eps, w, n, k);
  a.row_index = row_index;
  a.y = y;
  a.accumulate = accumulate;
  return LaunchRmsNorm<false>(a, rows, stream);
}

Status GemvRmsNormSiluMul(const float* x, const float* norm_weight, float eps, const __nv_bfloat16* w,
                          __nv_bfloat16* act, size_t rows, size_t ff, size_t k, cudaStream_t stream) {
  if (!GemvRmsNormTakes(rows, k))
    return Status::InvalidArgument(
        "GemvRmsNormSiluMul: rows must be 1..4, k a multiple of 8 and rows·k bf16 fit in 96 KiB");
  RmsNormArgs a = NormedRowsArgs(x, norm_weight, eps, w, ff, k);
  a.act = act;
  return LaunchRmsNorm<true>(a, rows, stream);
}

}  // namespace llmserve::kernels::cuda
