#include <math_constants.h>
#include <mma.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/prefill_attention.h"

namespace llmserve::kernels::cuda {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kTile = static_cast<int>(kPrefillTileTokens);  // queries and keys per tile
constexpr int kWarps = 4;                                    // 16 query rows each
constexpr int kRows = 16;

// Shared memory, row strides padded (elements) so rows start on different
// banks; every WMMA pointer below is 32-byte aligned.
template <int kHeadDim>
struct Smem {
  static constexpr int kLd = kHeadDim + 8;   // q, k, v: bf16
  static constexpr int kSLd = kTile + 4;     // scores: fp32
  static constexpr int kPLd = kTile + 8;     // probabilities: bf16
  static constexpr int kOLd = kHeadDim + 4;  // output accumulator: fp32
  static constexpr size_t kQ = 0;
  static constexpr size_t kK = kQ + sizeof(__nv_bfloat16) * kTile * kLd;
  static constexpr size_t kV = kK + sizeof(__nv_bfloat16) * kTile * kLd;
  static constexpr size_t kS = kV + sizeof(__nv_bfloat16) * kTile * kLd;
  static constexpr size_t kP = kS + sizeof(float) * kWarps * kRows * kSLd;
  static constexpr size_t kO = kP + sizeof(__nv_bfloat16) * kWarps * kRows * kPLd;
  static constexpr size_t kM = kO + sizeof(float) * kWarps * kRows * kOLd;
  static constexpr size_t kL = kM + sizeof(float) * kWarps * kRows;
  static constexpr size_t kBytes = kL + sizeof(float) * kWarps * kRows;
};

// Gathers keys [kt, kt + kTile) of KV head g into k_s / v_s in 16-byte
// pieces; keys past `last` are zeros.
template <int kHeadDim>
__device__ void GatherKvTile(const PagedAttentionArgs& a, const int32_t* table, int g, int kt, int last,
                             __nv_bfloat16* k_s, __nv_bfloat16* v_s) {
  using S = Smem<kHeadDim>;
  constexpr int kPieces = kHeadDim / 8;
  const int nkv = static_cast<int>(a.num_kv_heads), bs = static_cast<int>(a.block_size);
  for (int i = threadIdx.x; i < kTile * kPieces; i += blockDim.x) {
    const int row = i / kPieces, piece = i % kPieces, j = kt + row;
    uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
    if (j <= last) {
      const size_t block = static_cast<size_t>(table[j / bs]);
      const size_t at = ((block * nkv + g) * bs + j % bs) * kHeadDim + piece * 8;
      kv = *reinterpret_cast<const uint4*>(a.k_cache + at);
      vv = *reinterpret_cast<const uint4*>(a.v_cache + at);
    }
    *reinterpret_cast<uint4*>(k_s + row * S::kLd + piece * 8) = kv;
    *reinterpret_cast<uint4*>(v_s + row * S::kLd + piece * 8) = vv;
  }
}

// s_w (16 × kTile, fp32) = the warp's 16 query rows (from row0) · the key tileᵀ.
template <int kHeadDim>
__device__ void ScoreTile(const __nv_bfloat16* q_s, const __nv_bfloat16* k_s, int row0, float* s_w) {
  using S = Smem<kHeadDim>;
  for (int kc = 0; kc < kTile / 16; ++kc) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.f);
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> qa;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> kb;
      wmma::load_matrix_sync(qa, q_s + row0 * S::kLd + kk * 16, S::kLd);
      wmma::load_matrix_sync(kb, k_s + kc * 16 * S::kLd + kk * 16, S::kLd);
      wmma::mma_sync(acc, qa, kb, acc);
    }
    wmma::store_matrix_sync(s_w + kc * 16, acc, S::kSLd, wmma::mem_row_major);
  }
}

// The online softmax over one key tile for the warp's rows, two lanes per
// row (32 keys each): masks (causal, window, rows past the tile's queries),
// writes p as bf16 into p_w, rescales the row's output accumulator and
// updates its running max and sum.
template <int kHeadDim>
__device__ void SoftmaxTile(const float* s_w, int kt, int first_pos, bool row_valid, int window, float* m_w, float* l_w,
                            __nv_bfloat16* p_w, float* o_w) {
  using S = Smem<kHeadDim>;
  const int lane = threadIdx.x % 32, r = lane / 2, half = lane % 2, qpos = first_pos + r;
  const int lo = window > 0 && qpos + 1 > window ? qpos + 1 - window : 0;
  float tile_max = -CUDART_INF_F;
  for (int c = half * 32; c < half * 32 + 32; ++c) {
    const int kpos = kt + c;
    if (row_valid && kpos <= qpos && kpos >= lo) tile_max = fmaxf(tile_max, s_w[r * S::kSLd + c]);
  }
  tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
  const float m_old = m_w[r], m_new = fmaxf(m_old, tile_max);
  const float m_use = m_new == -CUDART_INF_F ? 0.f : m_new;  // a row with no key yet
  const float rescale = __expf(m_old - m_use);
  float sum = 0.f;
  for (int c = half * 32; c < half * 32 + 32; ++c) {
    const int kpos = kt + c;
    const bool valid = row_valid && kpos <= qpos && kpos >= lo;
    const float p = valid ? __expf(s_w[r * S::kSLd + c] - m_use) : 0.f;
    sum += p;
    p_w[r * S::kPLd + c] = __float2bfloat16(p);
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  for (int d = half * (kHeadDim / 2); d < (half + 1) * (kHeadDim / 2); ++d) o_w[r * S::kOLd + d] *= rescale;
  __syncwarp();
  if (half == 0) {
    m_w[r] = m_new;
    l_w[r] = l_w[r] * rescale + sum;
  }
}

// o_w (16 × head_dim, fp32) += p_w (16 × kTile) · the value tile.
template <int kHeadDim>
__device__ void AccumulateTile(const __nv_bfloat16* p_w, const __nv_bfloat16* v_s, float* o_w) {
  using S = Smem<kHeadDim>;
  for (int oc = 0; oc < kHeadDim / 16; ++oc) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, o_w + oc * 16, S::kOLd, wmma::mem_row_major);
    for (int kc = 0; kc < kTile / 16; ++kc) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> pa;
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> vb;
      wmma::load_matrix_sync(pa, p_w + kc * 16, S::kPLd);
      wmma::load_matrix_sync(vb, v_s + kc * 16 * S::kLd + oc * 16, S::kLd);
      wmma::mma_sync(acc, pa, vb, acc);
    }
    wmma::store_matrix_sync(o_w + oc * 16, acc, S::kOLd, wmma::mem_row_major);
  }
}

// Grid (tiles, heads), kWarps warps; warp w owns query rows [16w, 16w + 16).
template <int kHeadDim>
__global__ void __launch_bounds__(kWarps * 32) PrefillAttentionKernel(PagedAttentionArgs a) {
  using S = Smem<kHeadDim>;
  extern __shared__ __align__(128) unsigned char smem[];
  auto* q_s = reinterpret_cast<__nv_bfloat16*>(smem + S::kQ);
  auto* k_s = reinterpret_cast<__nv_bfloat16*>(smem + S::kK);
  auto* v_s = reinterpret_cast<__nv_bfloat16*>(smem + S::kV);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* s_w = reinterpret_cast<float*>(smem + S::kS) + warp * kRows * S::kSLd;
  auto* p_w = reinterpret_cast<__nv_bfloat16*>(smem + S::kP) + warp * kRows * S::kPLd;
  float* o_w = reinterpret_cast<float*>(smem + S::kO) + warp * kRows * S::kOLd;
  float* m_w = reinterpret_cast<float*>(smem + S::kM) + warp * kRows;
  float* l_w = reinterpret_cast<float*>(smem + S::kL) + warp * kRows;

  const int32_t* tile = a.prefill_tiles + 3 * blockIdx.x;
  const int request = tile[0], first_token = tile[1], count = tile[2];
  const int h = blockIdx.y, g = h / static_cast<int>(a.num_heads / a.num_kv_heads);
  const int p0 = a.positions[first_token], p_last = p0 + count - 1;
  const int window = static_cast<int>(a.sliding_window);
  const int first_key = window > 0 && p0 + 1 > window ? p0 + 1 - window : 0;
  const int32_t* table = a.block_tables + static_cast<size_t>(request) * a.block_table_stride;

  // Q tile (scaled) into shared memory as bf16; rows past `count` are zero.
  for (int i = threadIdx.x; i < kTile * kHeadDim; i += blockDim.x) {
    const int row = i / kHeadDim, d = i % kHeadDim;
    const float v =
        row < count ? a.q[static_cast<size_t>(first_token + row) * a.q_stride + h * kHeadDim + d] * a.scale : 0.f;
    q_s[row * S::kLd + d] = __float2bfloat16(v);
  }
  for (int i = lane; i < kRows * kHeadDim; i += 32) o_w[(i / kHeadDim) * S::kOLd + i % kHeadDim] = 0.f;
  if (lane < kRows) {
    m_w[lane] = -CUDART_INF_F;
    l_w[lane] = 0.f;
  }
  const int row0 = warp * kRows;  // the warp's first row in the tile
  const bool warp_has_rows = row0 < count;
  const int warp_last_pos = p0 + min(row0 + kRows, count) - 1;

  for (int kt = (first_key / kTile) * kTile; kt <= p_last; kt += kTile) {
    __syncthreads();  // the previous tile's K/V are no longer read
    GatherKvTile<kHeadDim>(a, table, g, kt, p_last, k_s, v_s);
    __syncthreads();
    // Warp-uniform: skip tiles wholly after the warp's last query.
    if (!warp_has_rows || kt > warp_last_pos) continue;
    ScoreTile<kHeadDim>(q_s, k_s, row0, s_w);
    __syncwarp();
    SoftmaxTile<kHeadDim>(s_w, kt, p0 + row0, row0 + lane / 2 < count, window, m_w, l_w, p_w, o_w);
    __syncwarp();
    AccumulateTile<kHeadDim>(p_w, v_s, o_w);
    __syncwarp();
  }

  __syncwarp();
  if (!warp_has_rows) return;
  for (int i = lane; i < kRows * kHeadDim; i += 32) {
    const int r = i / kHeadDim, d = i % kHeadDim;
    if (row0 + r >= count) continue;
    const float v = o_w[r * S::kOLd + d] / l_w[r];
    a.out[static_cast<size_t>(first_token + row0 + r) * a.out_stride + h * kHeadDim + d] = __float2bfloat16(v);
  }
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
