#include <algorithm>
#include <atomic>
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
// Loads in flight per thread while a block reads the rows it norms.
constexpr int kNormLoads = 8;
// 16-byte loads in flight per thread while a block copies bf16 rows.
constexpr int kCopyLoads = 4;
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

// wv[u] = the weight pieces lane's next DotRows step reads: pieces p0 + 32u
// below `end` of the row (zero past it).
__device__ __forceinline__ void LoadWeights(const uint4* __restrict__ wrow, size_t p0, size_t end,
                                            uint4 (&wv)[kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const size_t p = p0 + 32 * u;
    wv[u] = p < end ? wrow[p] : make_uint4(0, 0, 0, 0);
  }
}

// acc[r] += this lane's share of w_row · x[r] over pieces [begin, end) of 8
// values (x: kRows rows of k, global or shared memory); lane l reads the
// pieces begin + l, begin + l + 32, ... With `first_loaded`, wv already
// holds the first step's weights (LoadWeights(w_row, begin + lane, end)).
template <int kRows>
__device__ __forceinline__ void DotRows(const __nv_bfloat16* __restrict__ x, size_t k,
                                        const __nv_bfloat16* __restrict__ w_row, size_t begin, size_t end, int lane,
                                        float (&acc)[kRows], uint4 (&wv)[kUnroll], bool first_loaded) {
  const uint4* wrow = reinterpret_cast<const uint4*>(w_row);
  for (size_t p0 = begin + lane; p0 < end; p0 += 32 * kUnroll) {
    if (!first_loaded || p0 != begin + lane) LoadWeights(wrow, p0, end, wv);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const size_t p = p0 + 32 * u;
      if (p >= end) break;
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] += Dot8(wv[u], reinterpret_cast<const uint4*>(x + r * k)[p]);
    }
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
  // Each thread's loads go out kNormLoads at a time (latency, not
  // bandwidth, bounds this); the sums still add i = t, t + 256, ... in order.
  constexpr int kPerRow = kNormLoads / kRows;
  for (size_t i0 = threadIdx.x; i0 < k; i0 += kThreads * kPerRow) {
    float v[kRows][kPerRow];
#pragma unroll
    for (int j = 0; j < kPerRow; ++j) {
      const size_t i = i0 + j * kThreads;
#pragma unroll
      for (int r = 0; r < kRows; ++r) v[r][j] = i < k ? row[r][i] : 0.f;  // + 0 · 0 leaves a sum as it is
    }
#pragma unroll
    for (int j = 0; j < kPerRow; ++j) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) sum_sq[r] += v[r][j] * v[r][j];
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float s = WarpSum(sum_sq[r]);
    if (threadIdx.x % 32 == 0) partial[r][threadIdx.x / 32] = s;
  }
  __syncthreads();
  float inv_rms[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float total = 0.f;
    for (int w = 0; w < kWarpsPerBlock; ++w) total += partial[r][w];
    inv_rms[r] = rsqrtf(total / static_cast<float>(k) + eps);
  }
  for (size_t i0 = threadIdx.x; i0 < k; i0 += kThreads * kPerRow) {
    float v[kRows][kPerRow], wt[kPerRow];
#pragma unroll
    for (int j = 0; j < kPerRow; ++j) {
      const size_t i = i0 + j * kThreads;
      wt[j] = i < k ? weight[i] : 0.f;
#pragma unroll
      for (int r = 0; r < kRows; ++r) v[r][j] = i < k ? row[r][i] : 0.f;
    }
#pragma unroll
    for (int j = 0; j < kPerRow; ++j) {
      const size_t i = i0 + j * kThreads;
      if (i >= k) break;
#pragma unroll
      for (int r = 0; r < kRows; ++r) xs[r * k + i] = __float2bfloat16(v[r][j] * inv_rms[r] * wt[j]);
    }
  }
  __syncthreads();
}

struct RmsNormArgs {
  const __nv_bfloat16* x_bf16 = nullptr;  // when set: rows already in bf16, taken as they are (no norm)
  const float* x = nullptr;
  const int32_t* row_index = nullptr;
  const float* norm_weight = nullptr;
  float eps = 0.f;
  const __nv_bfloat16* w = nullptr;
  float* y = nullptr;          // [rows × n] (plain variant)
  __nv_bfloat16* act = nullptr;  // [rows × n] (SiLU variant, n = ff)
  size_t n = 0, k = 0;
  bool accumulate = false;
  GemvTuning tuning;
};

// The normed rows (or with x_bf16 the rows as given) in dynamic shared
// memory, then columns in rounds: a block takes 8 / kSplit columns a round,
// the kSplit warps of a column each summing a contiguous part of k, their
// sums added in part order. kSiluMul: column j's warps take gate row j and
// up row n + j and write act. Each warp may load its first weights before
// it waits for the kernel before (early_weight_loads; the kernels of a step
// never write weights). Without kRowsInShared the rows are read in place.
template <int kRows, bool kSiluMul, int kSplit, bool kRowsInShared>
__global__ void __launch_bounds__(kThreads, kRows <= 2 ? 4 : 3) GemvRmsNormKernel(RmsNormArgs a) {
  static_assert(kWarpsPerBlock % kSplit == 0);
  constexpr size_t kColsPerBlock = kWarpsPerBlock / kSplit;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, part = warp % kSplit;
  const size_t pieces = a.k / 8, part_pieces = (pieces + kSplit - 1) / kSplit;
  const size_t begin = part * part_pieces < pieces ? part * part_pieces : pieces;
  const size_t end = begin + part_pieces < pieces ? begin + part_pieces : pieces;
  const size_t first_col = blockIdx.x * kColsPerBlock + warp / kSplit;
  uint4 wv[kUnroll];
  const bool preloaded = a.tuning.early_weight_loads && first_col < a.n;
  if (preloaded) LoadWeights(reinterpret_cast<const uint4*>(a.w + first_col * a.k), begin + lane, end, wv);
  WaitForPriorGrid();
  LetDependentsLaunch();
  const __nv_bfloat16* xs = a.x_bf16;  // the rows, read where they are unless kRowsInShared
  if constexpr (kRowsInShared) {
    extern __shared__ uint4 shared_rows[];  // uint4: 16-byte aligned rows
    auto* rows = reinterpret_cast<__nv_bfloat16*>(shared_rows);
    if (a.x_bf16) {
      const uint4* src = reinterpret_cast<const uint4*>(a.x_bf16);
      const size_t pieces_all = kRows * a.k / 8;
      for (size_t i0 = threadIdx.x; i0 < pieces_all; i0 += kThreads * kCopyLoads) {
        uint4 v[kCopyLoads];
#pragma unroll
        for (int j = 0; j < kCopyLoads; ++j) {
          const size_t i = i0 + j * kThreads;
          if (i < pieces_all) v[j] = src[i];
        }
#pragma unroll
        for (int j = 0; j < kCopyLoads; ++j) {
          const size_t i = i0 + j * kThreads;
          if (i < pieces_all) shared_rows[i] = v[j];
        }
      }
      __syncthreads();
    } else {
      NormRowsToShared<kRows>(a.x, a.row_index, a.norm_weight, a.eps, a.k, rows);
    }
    xs = rows;
  }
  constexpr int kSums = kSiluMul ? 2 : 1;  // gate and up, or the one dot
  __shared__ float partial[kSplit > 1 ? kSums : 1][kRows][kSplit > 1 ? kWarpsPerBlock : 1];
  const size_t step = static_cast<size_t>(gridDim.x) * kColsPerBlock;
  // Every warp of a block goes round the same number of times (the parts of
  // a column meet at __syncthreads).
  for (size_t col0 = blockIdx.x * kColsPerBlock; col0 < a.n; col0 += step) {
    const size_t col = col0 + warp / kSplit;
    float sum[kSums][kRows] = {};
    if (col < a.n) {
      DotRows<kRows>(xs, a.k, a.w + col * a.k, begin, end, lane, sum[0], wv, preloaded && col == first_col);
      if constexpr (kSiluMul) DotRows<kRows>(xs, a.k, a.w + (a.n + col) * a.k, begin, end, lane, sum[1], wv, false);
    }
#pragma unroll
    for (int d = 0; d < kSums; ++d) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) sum[d][r] = WarpSum(sum[d][r]);
    }
    if constexpr (kSplit > 1) {
      if (lane == 0) {
#pragma unroll
        for (int d = 0; d < kSums; ++d) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) partial[d][r][warp] = sum[d][r];
        }
      }
      __syncthreads();
      if (part == 0) {
#pragma unroll
        for (int d = 0; d < kSums; ++d) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            for (int q = 1; q < kSplit; ++q) sum[d][r] += partial[d][r][warp + q];
          }
        }
      }
      __syncthreads();
    }
    if (lane != 0 || part != 0 || col >= a.n) continue;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if constexpr (kSiluMul) {
        const float g = sum[0][r], u = sum[kSums - 1][r];
        a.act[r * a.n + col] = __float2bfloat16(g / (1.f + expf(-g)) * u);  // SiluMulKernel's formula
      } else {
        a.y[r * a.n + col] = a.accumulate ? a.y[r * a.n + col] + sum[0][r] : sum[0][r];
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

template <int kRows, bool kSiluMul, int kSplit, bool kRowsInShared>
Status LaunchGemv(const RmsNormArgs& a, cudaStream_t stream) {
  auto* kernel = GemvRmsNormKernel<kRows, kSiluMul, kSplit, kRowsInShared>;
  // Once per instantiation, outside any graph capture (the first call of a
  // shape is eager).
  static const cudaError_t configured = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kGemvRmsNormMaxSharedBytes));
  LLMSERVE_RETURN_IF_ERROR(CudaStatus(configured, "GemvRmsNormKernel shared memory"));
  if (a.n == 0) return Status::Ok();
  const size_t shared = kRowsInShared ? kRows * a.k * sizeof(__nv_bfloat16) : 0;
  const size_t cols_per_block = kWarpsPerBlock / kSplit;
  const size_t groups = (a.n + cols_per_block - 1) / cols_per_block;
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
      LLMSERVE_RETURN_IF_ERROR(
          CudaStatus(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, shared),
                     "GemvRmsNormKernel occupancy"));
      it = resident_for_shared.emplace(shared, resident).first;
    }
    resident = it->second;
  }
  const size_t per_sm = std::clamp<size_t>(static_cast<size_t>(resident), 1, kRmsNormBlocksPerSm);
  const size_t blocks = NumSms() > 0 ? std::min(groups, NumSms() * per_sm) : groups;
  // A programmatic dependent launch (programmatic_launch.h): the blocks are
  // resident and waiting when the kernel before ends.
  return CudaStatus(LaunchKernel(LaunchGroup::kGemv, kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads),
                                 shared, stream, a),
                    "GemvRmsNormKernel launch");
}

template <int kRows, bool kSiluMul, bool kRowsInShared>
Status LaunchGemv(RmsNormArgs a, cudaStream_t stream) {
  a.tuning = CurrentGemvTuning();
  switch (a.tuning.warps_per_column) {
    case 1: return LaunchGemv<kRows, kSiluMul, 1, kRowsInShared>(a, stream);
    case 2: return LaunchGemv<kRows, kSiluMul, 2, kRowsInShared>(a, stream);
    default: return LaunchGemv<kRows, kSiluMul, 4, kRowsInShared>(a, stream);
  }
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

template <bool kSiluMul, bool kRowsInShared = true>
Status LaunchGemv(const RmsNormArgs& a, size_t rows, cudaStream_t stream) {
  switch (rows) {
    case 1: return LaunchGemv<1, kSiluMul, kRowsInShared>(a, stream);
    case 2: return LaunchGemv<2, kSiluMul, kRowsInShared>(a, stream);
    case 3: return LaunchGemv<3, kSiluMul, kRowsInShared>(a, stream);
    default: return LaunchGemv<4, kSiluMul, kRowsInShared>(a, stream);
  }
}

std::atomic<bool> early_weight_loads{GemvTuning().early_weight_loads};
std::atomic<int> warps_per_column{GemvTuning().warps_per_column};

}  // namespace

Status SetGemvTuning(const GemvTuning& tuning) {
  const int s = tuning.warps_per_column;
  if (s != 1 && s != 2 && s != 4) return Status::InvalidArgument("GemvTuning: warps_per_column must be 1, 2 or 4");
  early_weight_loads.store(tuning.early_weight_loads);
  warps_per_column.store(s);
  return Status::Ok();
}

GemvTuning CurrentGemvTuning() {
  GemvTuning t;
  t.early_weight_loads = early_weight_loads.load();
  t.warps_per_column = warps_per_column.load();
  return t;
}

Status Gemv(const __nv_bfloat16* x, const __nv_bfloat16* w, float* y, size_t rows, size_t n, size_t k, bool accumulate,
            cudaStream_t stream) {
  if (!GemvTakes(rows, k)) return Status::InvalidArgument("Gemv: rows must be 1..4 and k a multiple of 8");
  RmsNormArgs a;
  a.x_bf16 = x;
  a.w = w;
  a.y = y;
  a.n = n;
  a.k = k;
  a.accumulate = accumulate;
  // The rows in shared memory where they fit (the fused kernels' layout,
  // without the norm), else read in place; the sums are the same either way.
  if (GemvRmsNormTakes(rows, k)) return LaunchGemv<false>(a, rows, stream);
  return LaunchGemv<false, false>(a, rows, stream);
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
  return LaunchGemv<false>(a, rows, stream);
}

Status GemvRmsNormSiluMul(const float* x, const float* norm_weight, float eps, const __nv_bfloat16* w,
                          __nv_bfloat16* act, size_t rows, size_t ff, size_t k, cudaStream_t stream) {
  if (!GemvRmsNormTakes(rows, k))
    return Status::InvalidArgument(
        "GemvRmsNormSiluMul: rows must be 1..4, k a multiple of 8 and rows·k bf16 fit in 96 KiB");
  RmsNormArgs a = NormedRowsArgs(x, norm_weight, eps, w, ff, k);
  a.act = act;
  return LaunchGemv<true>(a, rows, stream);
}

}  // namespace llmserve::kernels::cuda
