#include <math_constants.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/paged_attention.h"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/prefill_attention.h"
#include "kernels/cuda/warp_sum.cuh"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kWarps = 4;

// A lane's share of one K or V row: kPerLane contiguous bf16, loaded as
// one vector where the row allows it.
template <int kPerLane>
struct LaneRow {
  __nv_bfloat16 x[kPerLane];

  __device__ void Load(const __nv_bfloat16* row, int lane, size_t hd) {
    const size_t d0 = static_cast<size_t>(lane) * kPerLane;
    if constexpr (kPerLane == 2 || kPerLane == 4 || kPerLane == 8) {
      // Rows are head_dim elements apart: with head_dim a multiple of
      // kPerLane the lane's slice is aligned and whole.
      if (hd % kPerLane == 0) {
        if (d0 >= hd) {
#pragma unroll
          for (int e = 0; e < kPerLane; ++e) x[e] = __float2bfloat16(0.f);
        } else if constexpr (kPerLane == 2) {
          *reinterpret_cast<unsigned*>(x) = *reinterpret_cast<const unsigned*>(row + d0);
        } else if constexpr (kPerLane == 4) {
          *reinterpret_cast<uint2*>(x) = *reinterpret_cast<const uint2*>(row + d0);
        } else {
          *reinterpret_cast<uint4*>(x) = *reinterpret_cast<const uint4*>(row + d0);
        }
        return;
      }
    }
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) x[e] = d0 + e < hd ? row[d0 + e] : __float2bfloat16(0.f);
  }
  __device__ float operator[](int e) const { return __bfloat162float(x[e]); }
};

// Merges the kWarps warps' partial softmaxes of the block's head i (in
// shared memory) and writes head h's output, or with split-K its split's
// (max, sum, unnormalised accumulator) to scratch.
template <int kGroup>
__device__ void WriteMergedHead(const PagedAttentionArgs& a, const float (*warp_m)[kGroup],
                                const float (*warp_l)[kGroup], const float (*warp_acc)[kGroup][kMaxAttentionHeadDim],
                                int i, size_t t, size_t h, size_t split) {
  const size_t hd = a.head_dim;
  float m_all = -CUDART_INF_F;
  for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, warp_m[w][i]);
  float weight[kWarps], l_all = 0.f;
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = warp_m[w][i] == -CUDART_INF_F ? 0.f : __expf(warp_m[w][i] - m_all);
    l_all += warp_l[w][i] * weight[w];
  }
  const size_t row = t * a.num_heads + h;
  for (size_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float sum = 0.f;
    for (int w = 0; w < kWarps; ++w) sum += warp_acc[w][i][d] * weight[w];
    if (a.num_splits == 1) {
      a.out[t * a.out_stride + h * hd + d] = __float2bfloat16(sum / l_all);
    } else {
      a.scratch[(row * a.num_splits + split) * (hd + 2) + 2 + d] = sum;
    }
  }
  if (a.num_splits > 1 && threadIdx.x == 0) {
    float* stats = a.scratch + (row * a.num_splits + split) * (hd + 2);
    stats[0] = m_all;
    stats[1] = l_all;
  }
}

// Grid (tokens, heads / kGroup, splits), kWarps warps. A block serves kGroup
// q heads that share one KV head (kGroup 1: one q head, any grouping), so
// each K/V row is read once for all of them. Lane l holds dims
// [l·kPerLane, (l+1)·kPerLane). Each warp takes kKeys consecutive keys at a
// time, their K and V loads issued together and their reductions
// overlapping, and keeps an online softmax per head; the warps then merge
// through shared memory. With one split the result is normalised into
// `out`; else (max, sum, unnormalised accumulator) go to scratch for
// MergeSplitsKernel.
template <int kPerLane, int kGroup>
__global__ void PagedAttentionKernel(PagedAttentionArgs a) {
  WaitForPriorGrid();
  LetDependentsLaunch();
  constexpr int kKeys = kGroup >= 8 ? 4 : 8;
  const size_t t = a.token_list ? static_cast<size_t>(a.token_list[blockIdx.x]) : blockIdx.x;
  const size_t split = blockIdx.z;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const size_t hd = a.head_dim, group = a.num_heads / a.num_kv_heads;
  const size_t h0 = blockIdx.y * kGroup, g = h0 / group;  // first q head, its KV head
  const size_t last = static_cast<size_t>(a.positions[t]);
  const size_t first = a.sliding_window > 0 && last + 1 > a.sliding_window ? last + 1 - a.sliding_window : 0;
  const size_t span = last + 1 - first, per_split = (span + a.num_splits - 1) / a.num_splits;
  const size_t begin = first + split * per_split, end = min(last + 1, begin + per_split);
  const int32_t* table = a.block_tables + static_cast<size_t>(a.token_request[t]) * a.block_table_stride;

  float q[kGroup][kPerLane], acc[kGroup][kPerLane], m[kGroup], l[kGroup];
  const size_t d0 = static_cast<size_t>(lane) * kPerLane;
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    const float* qrow = a.q + t * a.q_stride + (h0 + i) * hd;
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
      q[i][e] = d0 + e < hd ? qrow[d0 + e] * a.scale : 0.f;
      acc[i][e] = 0.f;
    }
    m[i] = -CUDART_INF_F;
    l[i] = 0.f;
  }
  const unsigned block_size = static_cast<unsigned>(a.block_size);
  for (size_t j0 = begin + static_cast<size_t>(warp) * kKeys; j0 < end; j0 += kWarps * kKeys) {
    // One (32-bit) division per step; the next keys advance through the block.
    unsigned block_index = static_cast<unsigned>(j0) / block_size, offset = static_cast<unsigned>(j0) % block_size;
    LaneRow<kPerLane> k[kKeys], v[kKeys];
#pragma unroll
    for (int u = 0; u < kKeys; ++u) {
      // Keys past the end repeat the last one and are masked below.
      if (u > 0 && j0 + u < end && ++offset == block_size) {
        offset = 0;
        ++block_index;
      }
      const size_t block = static_cast<size_t>(table[block_index]);
      const size_t base = ((block * a.num_kv_heads + g) * block_size + offset) * hd;
      k[u].Load(a.k_cache + base, lane, hd);
      v[u].Load(a.v_cache + base, lane, hd);
    }
#pragma unroll
    for (int i = 0; i < kGroup; ++i) {
      float s[kKeys];
      float step_max = -CUDART_INF_F;
#pragma unroll
      for (int u = 0; u < kKeys; ++u) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < kPerLane; ++e) dot += q[i][e] * k[u][e];
        s[u] = j0 + u < end ? WarpSum(dot) : -CUDART_INF_F;
        step_max = fmaxf(step_max, s[u]);
      }
      const float m_new = fmaxf(m[i], step_max), rescale = __expf(m[i] - m_new);
      l[i] *= rescale;
#pragma unroll
      for (int e = 0; e < kPerLane; ++e) acc[i][e] *= rescale;
#pragma unroll
      for (int u = 0; u < kKeys; ++u) {
        const float p = __expf(s[u] - m_new);  // 0 for masked keys
        l[i] += p;
#pragma unroll
        for (int e = 0; e < kPerLane; ++e) acc[i][e] += p * v[u][e];
      }
      m[i] = m_new;
    }
  }

  __shared__ float warp_m[kWarps][kGroup], warp_l[kWarps][kGroup];
  __shared__ float warp_acc[kWarps][kGroup][kMaxAttentionHeadDim];
#pragma unroll
  for (int i = 0; i < kGroup; ++i) {
    if (lane == 0) {
      warp_m[warp][i] = m[i];
      warp_l[warp][i] = l[i];
    }
#pragma unroll
    for (int e = 0; e < kPerLane; ++e) {
      if (d0 + e < hd) warp_acc[warp][i][d0 + e] = acc[i][e];
    }
  }
  __syncthreads();
  for (int i = 0; i < kGroup; ++i) WriteMergedHead<kGroup>(a, warp_m, warp_l, warp_acc, i, t, h0 + i, split);
}

// An attention kernel of kWarps warps over `grid`, as a programmatic
// dependent where that is on (programmatic_launch.h).
cudaError_t Launch(void (*kernel)(PagedAttentionArgs), dim3 grid, const PagedAttentionArgs& a, cudaStream_t stream) {
  return LaunchKernel(LaunchGroup::kAttention, kernel, grid, dim3(kWarps * 32), 0, stream, a);
}

template <int kPerLane>
cudaError_t LaunchPerToken(const PagedAttentionArgs& a, size_t tokens, cudaStream_t stream) {
  const int kGroup = static_cast<int>(a.num_heads / AttentionBlocksPerToken(a.num_heads, a.num_kv_heads));
  const dim3 grid(static_cast<unsigned>(tokens), static_cast<unsigned>(a.num_heads / kGroup),
                  static_cast<unsigned>(a.num_splits));
  switch (kGroup) {
    case 2: return Launch(PagedAttentionKernel<kPerLane, 2>, grid, a, stream);
    case 4: return Launch(PagedAttentionKernel<kPerLane, 4>, grid, a, stream);
    case 8: return Launch(PagedAttentionKernel<kPerLane, 8>, grid, a, stream);
    default: return Launch(PagedAttentionKernel<kPerLane, 1>, grid, a, stream);
  }
}

// Grid (tokens, heads): merges the splits' partial softmaxes.
__global__ void MergeSplitsKernel(PagedAttentionArgs a) {
  WaitForPriorGrid();
  LetDependentsLaunch();
  const size_t t = a.token_list ? static_cast<size_t>(a.token_list[blockIdx.x]) : blockIdx.x;
  const size_t h = blockIdx.y, hd = a.head_dim, stride = hd + 2;
  const float* parts = a.scratch + (t * a.num_heads + h) * a.num_splits * stride;
  float m_all = -CUDART_INF_F;
  for (size_t s = 0; s < a.num_splits; ++s) m_all = fmaxf(m_all, parts[s * stride]);
  float l_all = 0.f;
  for (size_t s = 0; s < a.num_splits; ++s) {
    const float m = parts[s * stride];
    if (m != -CUDART_INF_F) l_all += parts[s * stride + 1] * __expf(m - m_all);
  }
  for (size_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float sum = 0.f;
    for (size_t s = 0; s < a.num_splits; ++s) {
      const float m = parts[s * stride];
      if (m != -CUDART_INF_F) sum += parts[s * stride + 2 + d] * __expf(m - m_all);
    }
    a.out[t * a.out_stride + h * hd + d] = __float2bfloat16(sum / l_all);
  }
}

}  // namespace

size_t AttentionBlocksPerToken(size_t num_heads, size_t num_kv_heads) {
  const size_t group = num_kv_heads ? num_heads / num_kv_heads : 1;
  return group == 2 || group == 4 || group == 8 ? num_kv_heads : num_heads;
}

size_t ChooseAttentionSplits(size_t tokens, size_t blocks_per_token, size_t max_context, size_t num_sms) {
  // Latency-bound blocks: aim at 8 per SM, each with at least 128 keys.
  const size_t blocks = tokens * blocks_per_token, target = 8 * num_sms;
  if (blocks >= target) return 1;
  const size_t by_length = (max_context + 127) / 128;
  const size_t to_fill = (target + blocks - 1) / std::max<size_t>(blocks, 1);
  return std::max<size_t>(1, std::min({by_length, to_fill, size_t{16}}));
}

Status PagedAttention(const PagedAttentionArgs& args, cudaStream_t stream) {
  if (args.tokens == 0) return Status::Ok();
  if (args.head_dim == 0 || args.head_dim > kMaxAttentionHeadDim)
    return Status::InvalidArgument("PagedAttention: head_dim must be in 1.." + std::to_string(kMaxAttentionHeadDim));
  if (args.num_kv_heads == 0 || args.num_heads % args.num_kv_heads != 0)
    return Status::InvalidArgument("PagedAttention: num_heads must be a multiple of num_kv_heads");
  if (args.num_splits == 0 || (args.num_splits > 1 && args.scratch == nullptr))
    return Status::InvalidArgument("PagedAttention: split-K needs scratch");
  if (args.num_prefill_tiles > 0) LLMSERVE_RETURN_IF_ERROR(PrefillAttention(args, stream));
  const size_t tokens = args.token_list ? args.token_list_size : args.tokens;
  if (tokens == 0) return Status::Ok();
  // Each lane holds ceil(head_dim / 32) dims.
  cudaError_t launched;
  switch ((args.head_dim + 31) / 32) {
    case 1: launched = LaunchPerToken<1>(args, tokens, stream); break;
    case 2: launched = LaunchPerToken<2>(args, tokens, stream); break;
    case 3: launched = LaunchPerToken<3>(args, tokens, stream); break;
    case 4: launched = LaunchPerToken<4>(args, tokens, stream); break;
    case 5: launched = LaunchPerToken<5>(args, tokens, stream); break;
    case 6: launched = LaunchPerToken<6>(args, tokens, stream); break;
    case 7: launched = LaunchPerToken<7>(args, tokens, stream); break;
    default: launched = LaunchPerToken<8>(args, tokens, stream); break;
  }
  LLMSERVE_RETURN_IF_ERROR(CudaStatus(launched, "PagedAttentionKernel launch"));
  if (args.num_splits == 1) return Status::Ok();
  return CudaStatus(
      Launch(MergeSplitsKernel, dim3(static_cast<unsigned>(tokens), static_cast<unsigned>(args.num_heads)), args, stream),
      "MergeSplitsKernel launch");
}

}  // namespace llmserve::kernels::cuda
