#include <math_constants.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/paged_attention.h"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kMaxPerLane = static_cast<int>(kMaxAttentionHeadDim / 32);

__device__ float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Grid (tokens, heads, splits), kWarps warps. Each warp walks every
// kWarps-th key of the split's range with an online softmax; lane l holds
// dims l, l + 32, ...; the warps then merge through shared memory. With one
// split the result is normalised into `out`; else (max, sum, unnormalised
// accumulator) go to scratch for MergeSplitsKernel.
__global__ void PagedAttentionKernel(PagedAttentionArgs a) {
  const size_t t = blockIdx.x, h = blockIdx.y, split = blockIdx.z;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const size_t hd = a.head_dim, group = a.num_heads / a.num_kv_heads, g = h / group;
  const size_t last = static_cast<size_t>(a.positions[t]);
  const size_t first = a.sliding_window > 0 && last + 1 > a.sliding_window ? last + 1 - a.sliding_window : 0;
  const size_t span = last + 1 - first, per_split = (span + a.num_splits - 1) / a.num_splits;
  const size_t begin = first + split * per_split, end = min(last + 1, begin + per_split);
  const int32_t* table = a.block_tables + static_cast<size_t>(a.token_request[t]) * a.block_table_stride;

  float q[kMaxPerLane], acc[kMaxPerLane];
  const float* qrow = a.q + t * a.q_stride + h * hd;
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e) {
    const size_t d = lane + 32 * e;
    q[e] = d < hd ? qrow[d] * a.scale : 0.f;
    acc[e] = 0.f;
  }
  float m = -CUDART_INF_F, l = 0.f;
  for (size_t j = begin + warp; j < end; j += kWarps) {
    const size_t block = static_cast<size_t>(table[j / a.block_size]), offset = j % a.block_size;
    const size_t base = ((block * a.num_kv_heads + g) * a.block_size + offset) * hd;
    const __nv_bfloat16* k = a.k_cache + base;
    const __nv_bfloat16* v = a.v_cache + base;
    float dot = 0.f;
#pragma unroll
    for (int e = 0; e < kMaxPerLane; ++e) {
      const size_t d = lane + 32 * e;
      if (d < hd) dot += q[e] * __bfloat162float(k[d]);
    }
    const float s = WarpSum(dot);
    const float m_new = fmaxf(m, s), rescale = __expf(m - m_new), p = __expf(s - m_new);
    l = l * rescale + p;
#pragma unroll
    for (int e = 0; e < kMaxPerLane; ++e) {
      const size_t d = lane + 32 * e;
      if (d < hd) acc[e] = acc[e] * rescale + p * __bfloat162float(v[d]);
    }
    m = m_new;
  }

  __shared__ float warp_m[kWarps], warp_l[kWarps];
  __shared__ float warp_acc[kWarps][kMaxAttentionHeadDim];
  if (lane == 0) {
    warp_m[warp] = m;
    warp_l[warp] = l;
  }
#pragma unroll
  for (int e = 0; e < kMaxPerLane; ++e) {
    const size_t d = lane + 32 * e;
    if (d < hd) warp_acc[warp][d] = acc[e];
  }
  __syncthreads();
  float m_all = -CUDART_INF_F;
  for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, warp_m[w]);
  float weight[kWarps], l_all = 0.f;
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = warp_m[w] == -CUDART_INF_F ? 0.f : __expf(warp_m[w] - m_all);
    l_all += warp_l[w] * weight[w];
  }
  const size_t row = t * a.num_heads + h;
  for (size_t d = threadIdx.x; d < hd; d += blockDim.x) {
    float sum = 0.f;
    for (int w = 0; w < kWarps; ++w) sum += warp_acc[w][d] * weight[w];
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

// Grid (tokens, heads): merges the splits' partial softmaxes.
__global__ void MergeSplitsKernel(PagedAttentionArgs a) {
  const size_t t = blockIdx.x, h = blockIdx.y, hd = a.head_dim, stride = hd + 2;
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

size_t ChooseAttentionSplits(size_t tokens, size_t num_heads, size_t max_context, size_t num_sms) {
  const size_t blocks = tokens * num_heads;
  if (blocks >= 2 * num_sms) return 1;
  const size_t by_length = (max_context + 255) / 256;
  const size_t to_fill = (2 * num_sms + blocks - 1) / std::max<size_t>(blocks, 1);
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
  const dim3 grid(static_cast<unsigned>(args.tokens), static_cast<unsigned>(args.num_heads),
                  static_cast<unsigned>(args.num_splits));
  PagedAttentionKernel<<<grid, kWarps * 32, 0, stream>>>(args);
  LLMSERVE_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "PagedAttentionKernel launch"));
  if (args.num_splits == 1) return Status::Ok();
  MergeSplitsKernel<<<dim3(static_cast<unsigned>(args.tokens), static_cast<unsigned>(args.num_heads)), 128, 0,
                      stream>>>(args);
  return CudaStatus(cudaGetLastError(), "MergeSplitsKernel launch");
}

}  // namespace llmserve::kernels::cuda
