#include <math_constants.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/mma_bf16.cuh"
#include "kernels/cuda/prefill_attention.h"

namespace llmserve::kernels::cuda {

namespace {

constexpr int kTile = static_cast<int>(kPrefillTileTokens);  // queries and keys per tile
constexpr int kWarps = 4;                                    // 16 query rows each
constexpr int kRows = 16;
constexpr int kKeyGroups = kTile / 8;  // the n = 8 column groups of a score tile
constexpr float kLog2e = 1.4426950408889634f;

// Shared memory: two stages of (K tile, V tile), bf16 rows padded by 8
// elements so that the 8 rows one load touches start on different banks.
template <int kHeadDim>
struct Smem {
  static constexpr int kLd = kHeadDim + 8;
  static constexpr int kTileElems = kTile * kLd;
  static constexpr size_t kBytes = sizeof(__nv_bfloat16) * 2 * 2 * kTileElems;
  __device__ static __nv_bfloat16* K(unsigned char* smem, int stage) {
    return reinterpret_cast<__nv_bfloat16*>(smem) + (2 * stage) * kTileElems;
  }
  __device__ static __nv_bfloat16* V(unsigned char* smem, int stage) { return K(smem, stage) + kTileElems; }
};

// Starts copying keys [kt, kt + kTile) of KV head g into k_s / v_s in
// 16-byte pieces; keys past `last` are zeros.
template <int kHeadDim>
__device__ void GatherKvTileAsync(const PagedAttentionArgs& a, const int32_t* table, int g, int kt, int last,
                                  __nv_bfloat16* k_s, __nv_bfloat16* v_s) {
  constexpr int kPieces = kHeadDim / 8, kLd = Smem<kHeadDim>::kLd;
  const int nkv = static_cast<int>(a.num_kv_heads), bs = static_cast<int>(a.block_size);
  for (int i = threadIdx.x; i < kTile * kPieces; i += blockDim.x) {
    const int row = i / kPieces, piece = i % kPieces, j = kt + row;
    const bool inside = j <= last;
    size_t at = 0;
    if (inside) {
      const size_t block = static_cast<size_t>(table[j / bs]);
      at = ((block * nkv + g) * bs + j % bs) * kHeadDim + piece * 8;
    }
    CopyAsync16(k_s + row * kLd + piece * 8, a.k_cache + at, !inside);
    CopyAsync16(v_s + row * kLd + piece * 8, a.v_cache + at, !inside);
  }
}

// The warp's 16 query rows (from row0 of the tile; zeros past `count`),
// scaled and rounded to bf16, as A fragments over head_dim.
template <int kHeadDim>
__device__ void LoadQFragments(const PagedAttentionArgs& a, int first_token, int row0, int count, int h,
                               uint32_t (&qf)[kHeadDim / 16][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {  // rows g and g + 8
    const int row = row0 + g + 8 * half;
    const float* q = row < count ? a.q + static_cast<size_t>(first_token + row) * a.q_stride + h * kHeadDim : nullptr;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
#pragma unroll
      for (int hi = 0; hi < 2; ++hi) {  // columns 2t, 2t + 1 and 2t + 8, 2t + 9
        const float2 v = q ? *reinterpret_cast<const float2*>(q + kk * 16 + 2 * t + 8 * hi) : make_float2(0.f, 0.f);
        qf[kk][half + 2 * hi] = PackBf16(v.x * a.scale, v.y * a.scale);
      }
    }
  }
}

// s[n] = the warp's 16 query rows · keys 8n .. 8n + 7 of the tile (C layout).
template <int kHeadDim>
__device__ void ScoreTile(const uint32_t (&qf)[kHeadDim / 16][4], const __nv_bfloat16* k_s,
                          float (&s)[kKeyGroups][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int n = 0; n < kKeyGroups; ++n) {
    s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    const __nv_bfloat16* key = k_s + (n * 8 + g) * Smem<kHeadDim>::kLd + 2 * t;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      const uint32_t b0 = *reinterpret_cast<const uint32_t*>(key + kk * 16);
      const uint32_t b1 = *reinterpret_cast<const uint32_t*>(key + kk * 16 + 8);
      MmaBf16(s[n], qf[kk], b0, b1);
    }
  }
}

// The online softmax over one key tile for the lane's rows g and g + 8
// (half 0 and 1), in the log2 domain: masks (causal, window, rows past the
// tile's queries), turns s into unnormalised probabilities against the new
// running max, and rescales the row's partial sum and output accumulator.
// `qpos0` is the position of the warp's first row, `rows` how many of its
// rows are queries.
template <int kHeadDim>
__device__ void SoftmaxTile(float (&s)[kKeyGroups][4], int kt, int qpos0, int rows, int window, float (&m)[2],
                            float (&l)[2], float (&o)[kHeadDim / 8][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = g + 8 * half, qpos = qpos0 + r;
    const int lo = window > 0 && qpos + 1 > window ? qpos + 1 - window : 0;
    float tile_max = -CUDART_INF_F;
#pragma unroll
    for (int n = 0; n < kKeyGroups; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int kpos = kt + n * 8 + 2 * t + e;
        float& v = s[n][2 * half + e];
        v = r < rows && kpos <= qpos && kpos >= lo ? v * kLog2e : -CUDART_INF_F;
        tile_max = fmaxf(tile_max, v);
      }
    }
    // The 4 lanes of a quad hold one row.
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
    const float m_new = fmaxf(m[half], tile_max);
    const float m_use = m_new == -CUDART_INF_F ? 0.f : m_new;  // a row with no key yet
    const float rescale = exp2f(m[half] - m_use);
    float sum = 0.f;
#pragma unroll
    for (int n = 0; n < kKeyGroups; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& v = s[n][2 * half + e];
        v = exp2f(v - m_use);
        sum += v;
      }
    }
    l[half] = l[half] * rescale + sum;
    m[half] = m_new;
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
      o[d][2 * half] *= rescale;
      o[d][2 * half + 1] *= rescale;
    }
  }
}

// o += p · the value tile, p (the softmax's s) rounded to bf16: the C
// fragments of key groups 2c and 2c + 1 are the A fragment of keys
// [16c, 16c + 16); V comes transposed through ldmatrix, two 8-column
// groups of head_dim per load.
template <int kHeadDim>
__device__ void AccumulateTile(const float (&s)[kKeyGroups][4], const __nv_bfloat16* v_s,
                               float (&o)[kHeadDim / 8][4]) {
  const int lane = threadIdx.x % 32, matrix = lane / 8, row = lane % 8;
#pragma unroll
  for (int c = 0; c < kTile / 16; ++c) {
    const uint32_t pa[4] = {PackBf16(s[2 * c][0], s[2 * c][1]), PackBf16(s[2 * c][2], s[2 * c][3]),
                            PackBf16(s[2 * c + 1][0], s[2 * c + 1][1]), PackBf16(s[2 * c + 1][2], s[2 * c + 1][3])};
    // Matrices 0..3: keys +0 / +8 of the chunk, columns +0 / +8.
    const __nv_bfloat16* v_row = v_s + (16 * c + row + 8 * (matrix & 1)) * Smem<kHeadDim>::kLd + 8 * (matrix >> 1);
#pragma unroll
    for (int d = 0; d < kHeadDim / 16; ++d) {
      uint32_t b[4];
      LdMatrixX4Trans(b, v_row + 16 * d);
      MmaBf16(o[2 * d], pa, b[0], b[1]);
      MmaBf16(o[2 * d + 1], pa, b[2], b[3]);
    }
  }
}

// The warp's rows of the output: o / l as bf16.
template <int kHeadDim>
__device__ void WriteRows(const PagedAttentionArgs& a, int first_token, int row0, int count, int h,
                          const float (&o)[kHeadDim / 8][4], float (&l)[2]) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    l[half] += __shfl_xor_sync(0xffffffffu, l[half], 1);
    l[half] += __shfl_xor_sync(0xffffffffu, l[half], 2);
    const int row = row0 + g + 8 * half;
    if (row >= count) continue;
    const float inv = 1.f / l[half];  // the query's own key is always counted: l > 0
    __nv_bfloat16* out = a.out + static_cast<size_t>(first_token + row) * a.out_stride + h * kHeadDim + 2 * t;
#pragma unroll
    for (int d = 0; d < kHeadDim / 8; ++d) {
      *reinterpret_cast<__nv_bfloat162*>(out + 8 * d) =
          __floats2bfloat162_rn(o[d][2 * half] * inv, o[d][2 * half + 1] * inv);
    }
  }
}

// Grid (tiles, heads), kWarps warps; warp w owns query rows [16w, 16w + 16)
// of the tile and keeps its scores, probabilities and output accumulator in
// registers. K/V tiles are double-buffered: the next one is copied while
// the current one is used.
template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) PrefillAttentionKernel(PagedAttentionArgs a) {
  using S = Smem<kHeadDim>;
  extern __shared__ __align__(128) unsigned char smem[];
  // Later tiles of a request see more keys: hand them out first.
  const int32_t* tile = a.prefill_tiles + 3 * (a.num_prefill_tiles - 1 - blockIdx.x);
  const int request = tile[0], first_token = tile[1], count = tile[2];
  const int h = blockIdx.y, g = h / static_cast<int>(a.num_heads / a.num_kv_heads);
  const int p0 = a.positions[first_token], p_last = p0 + count - 1;
  const int window = static_cast<int>(a.sliding_window);
  const int first_key = window > 0 && p0 + 1 > window ? p0 + 1 - window : 0;
  const int32_t* table = a.block_tables + static_cast<size_t>(request) * a.block_table_stride;

  const int row0 = (threadIdx.x / 32) * kRows, rows = count - row0;  // rows ≤ 0: the warp only copies
  const int warp_last_pos = p0 + min(row0 + kRows, count) - 1;
  uint32_t qf[kHeadDim / 16][4];
  LoadQFragments<kHeadDim>(a, first_token, row0, count, h, qf);
  float o[kHeadDim / 8][4] = {};
  float m[2] = {-CUDART_INF_F, -CUDART_INF_F}, l[2] = {0.f, 0.f};

  const int kt0 = (first_key / kTile) * kTile;
  GatherKvTileAsync<kHeadDim>(a, table, g, kt0, p_last, S::K(smem, 0), S::V(smem, 0));
  CopyAsyncCommit();
  for (int i = 0, kt = kt0; kt <= p_last; ++i, kt += kTile) {
    const int stage = i % 2;
    if (kt + kTile <= p_last)
      GatherKvTileAsync<kHeadDim>(a, table, g, kt + kTile, p_last, S::K(smem, 1 - stage), S::V(smem, 1 - stage));
    CopyAsyncCommit();
    CopyAsyncWait<1>();  // this tile's copies are done
    __syncthreads();
    // Warp-uniform: skip tiles wholly after the warp's last query.
    if (rows > 0 && kt <= warp_last_pos) {
      float s[kKeyGroups][4];
      ScoreTile<kHeadDim>(qf, S::K(smem, stage), s);
      SoftmaxTile<kHeadDim>(s, kt, p0 + row0, rows, window, m, l, o);
      AccumulateTile<kHeadDim>(s, S::V(smem, stage), o);
    }
    __syncthreads();  // the stage is free for the copy after next
  }
  if (rows > 0) WriteRows<kHeadDim>(a, first_token, row0, count, h, o, l);
}

template <int kHeadDim>
Status Launch(const PagedAttentionArgs& a, cudaStream_t stream) {
  constexpr size_t kBytes = Smem<kHeadDim>::kBytes;
  static const cudaError_t configured = cudaFuncSetAttribute(
      PrefillAttentionKernel<kHeadDim>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kBytes));
  LLMSERVE_RETURN_IF_ERROR(CudaStatus(configured, "PrefillAttentionKernel shared memory"));
  const dim3 grid(static_cast<unsigned>(a.num_prefill_tiles), static_cast<unsigned>(a.num_heads));
  PrefillAttentionKernel<kHeadDim><<<grid, kWarps * 32, kBytes, stream>>>(a);
  return CudaStatus(cudaGetLastError(), "PrefillAttentionKernel launch");
}

}  // namespace

bool PrefillAttentionSupports(size_t head_dim) { return head_dim == 64 || head_dim == 128; }

void PlanPrefillTiles(const std::vector<int32_t>& query_start, std::vector<int32_t>* tiles,
                      std::vector<int32_t>* other_tokens) {
  tiles->clear();
  other_tokens->clear();
  for (size_t r = 0; r + 1 < query_start.size(); ++r) {
    const int32_t begin = query_start[r], end = query_start[r + 1];
    if (static_cast<size_t>(end - begin) < kPrefillMinTokens) {
      for (int32_t t = begin; t < end; ++t) other_tokens->push_back(t);
      continue;
    }
    for (int32_t t = begin; t < end; t += static_cast<int32_t>(kPrefillTileTokens)) {
      tiles->insert(tiles->end(), {static_cast<int32_t>(r), t, std::min<int32_t>(kPrefillTileTokens, end - t)});
    }
  }
}

Status PrefillAttention(const PagedAttentionArgs& a, cudaStream_t stream) {
  if (a.num_prefill_tiles == 0) return Status::Ok();
  switch (a.head_dim) {
    case 64: return Launch<64>(a, stream);
    case 128: return Launch<128>(a, stream);
    default: return Status::InvalidArgument("PrefillAttention: head_dim must be 64 or 128");
  }
}

}  // namespace llmserve::kernels::cuda
