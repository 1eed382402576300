// Paged attention with bf16 products on AMX tiles (PagedAttentionShape::
// bf16_products; reached only after AmxAttentionUsable said yes).
//
// The cache is in the tile-ready layout (paged_attention.h): per block and KV
// head, K is [block_size][head_dim] and V is [head_dim][block_size]. Both are
// then A operands read straight from the cache, with the query side as B:
//   scoresᵀ = K · Qᵀ  (A tile: 16 keys × 32 dims; B tile: Qᵀ in dim pairs)
//   outᵀ    = Vᵀ · Pᵀ (A tile: 16 dims × 32 keys; B tile: Pᵀ in key pairs)
// so a decode step converts nothing. A bf16 cache is read in place; an fp32
// cache is first rounded to bf16 blocks of the same layout (vcvtne2ps2bf16,
// which also flushes denormals): by each item, or once per call and KV head
// for a request longer than one item ("staged").
//
// Work items: (KV head, up to 2 row tiles of one request's consecutive query
// tokens). A row tile is up to 16 query rows, 16 / group tokens each with its
// GQA group of heads (row = token * group + head); rows are the columns of the
// Qᵀ, Pᵀ and C tiles.
//
// Operands, all bf16 rounded to nearest even: q and the softmax numerators p
// as F32ToBf16, K/V as written (bf16 cache) or by the staging conversion.
// Each C element sees, per tdpbf16ps, the same bf16 products in the same order
// as in Q · Kᵀ and P · V (the roles of A and B swapped): scores over head_dim in
// 32-dim steps in d order, P · V over 32-key steps in position order.
//
// Softmax, per row: the row's scaled scores over the span's keys (its
// scoresᵀ column), masked outside its [first, last]; the max, then
// e = exp(x - max), summed in 16 partial sums by position mod 16, and e
// rounded to bf16 for P (zero outside [first, last]). Full row tiles (prefill) do it for all their
// rows at once, one vector lane per row; small ones (a decode's GQA group)
// row by row, vectorised over keys; both give the same bits.
//
// Determinism (chunking, batch and prefix-cache invariance): a row's scores
// depend only on its query and the keys (rows of a tile never interact). Its
// max is order-free; its sum's partial sums take its own e by absolute
// position (spans start at a block), and the keys an item's span adds outside
// the row's range add exact zeros. Its P · V accumulators see the 32-key steps of the
// span, aligned to absolute positions; steps outside the row's range have
// p = 0 and finite V (the step holding the item's last position is copied
// with the keys past it zeroed, and later steps are not read, so stale or
// unwritten cache slots never reach a product), so they add exact zeros. So a
// token gives the same bits alone (a decode), in any item of a prefill, or
// after its prefix came from the cache; and a bf16 cache gives the bits of an
// fp32 cache holding the same bf16 values.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/cpu/paged_attention_item.h"

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define LLMSERVE_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

namespace llmserve::kernels::cpu::internal {
namespace {

using Buffer = std::vector<uint16_t, AlignedAllocator<uint16_t>>;
using WordBuffer = std::vector<uint32_t, AlignedAllocator<uint32_t>>;
using FloatBuffer = std::vector<float, AlignedAllocator<float>>;

constexpr size_t kTileRows = 16;
constexpr size_t kRowTiles = 2;  // row tiles per item (each A tile serves both)
constexpr size_t kTileWords = 16 * 16;  // one B tile: 16 pair rows × 16 columns of 32 bits

// The tile shapes of both products: C tiles 0, 1 (row tile 0: 16 × n0 fp32)
// and 2, 3 (row tile 1: 16 × n1), A tiles 4, 5 (16 rows × 32 bf16), B tiles 6
// (16 pairs × n0) and 7 (16 pairs × n1). n1 = 0 leaves tiles 2, 3, 7 unused.
amx::TileConfig ItemConfig(int n0, int n1) {
  amx::TileConfig c;
  auto set = [&c](int tile, int colsb) {
    c.rows[tile] = colsb > 0 ? 16 : 0;
    c.colsb[tile] = static_cast<uint16_t>(colsb);
  };
  set(0, 4 * n0);
  set(1, 4 * n0);
  set(2, 4 * n1);
  set(3, 4 * n1);
  set(4, 64);
  set(5, 64);
  set(6, 4 * n0);
  set(7, 4 * n1);
  return c;
}

// bf16 bits (nearest even, NaN kept quiet: as F32ToBf16) of 16 floats, in the
// low half of each 32-bit lane.
LLMSERVE_AVX512 inline __m512i RoundToBf16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
}

// Rounds n fp32 cache elements (n a multiple of 32) to bf16.
LLMSERVE_AVX512_BF16 void RoundBlock(const float* src, size_t n, uint16_t* dst) {
  for (size_t i = 0; i < n; i += 32) {
    const __m512bh both = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i + 16), _mm512_loadu_ps(src + i));
    _mm512_storeu_si512(dst + i, (__m512i)both);
  }
}

// One item: tokens [tb, te) of one request, against KV head kv_head.
struct Item {
  size_t kv_head = 0;
  size_t tb = 0, te = 0;
};

// A request's blocks rounded to bf16 for one KV head: block i's K at
// k + i * elems, its V at v + i * elems.
struct Staged {
  const uint16_t* k = nullptr;
  const uint16_t* v = nullptr;
};

struct Scratch {
  Buffer k, v;        // an fp32 cache's blocks rounded to bf16, for an unstaged item
  WordBuffer qt, pt;  // Qᵀ and Pᵀ B tiles
  Buffer v_tail;      // the V step past the item's last position, zero-padded
  FloatBuffer st, ot;  // scoresᵀ [row tile][key][16], outᵀ [row tile][dim][16]
  FloatBuffer row;     // one row's scaled scores, then its softmax numerators
};

// scoresᵀ of two 16-key groups (A tiles from k0, k0 + 16 keys; rows hd apart)
// against the Qᵀ tiles of one or two row tiles, stored to st0 / st1 rows
// (16 floats each) from key `key`.
template <bool kTwoRowTiles>
LLMSERVE_AVX512 void ScoreKeys(const uint16_t* k0, size_t hd, const uint32_t* qt, float* st0, float* st1,
                               size_t key) {
  const size_t kk_count = hd / 32, row_bytes = hd * sizeof(uint16_t);
  const uint16_t* k1 = k0 + 16 * hd;
  LLMSERVE_TILE_ZERO(0);
  LLMSERVE_TILE_ZERO(1);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_ZERO(2);
    LLMSERVE_TILE_ZERO(3);
  }
  for (size_t kk = 0; kk < kk_count; ++kk) {
    LLMSERVE_TILE_LOAD(4, k0 + 32 * kk, row_bytes);
    LLMSERVE_TILE_LOAD(6, qt + kk * kTileWords, 64);
    LLMSERVE_TILE_DP(0, 4, 6);
    LLMSERVE_TILE_LOAD(5, k1 + 32 * kk, row_bytes);
    LLMSERVE_TILE_DP(1, 5, 6);
    if constexpr (kTwoRowTiles) {
      LLMSERVE_TILE_LOAD(7, qt + (kk_count + kk) * kTileWords, 64);
      LLMSERVE_TILE_DP(2, 4, 7);
      LLMSERVE_TILE_DP(3, 5, 7);
    }
  }
  LLMSERVE_TILE_STORE(0, st0 + key * 16, 64);
  LLMSERVE_TILE_STORE(1, st0 + (key + 16) * 16, 64);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_STORE(2, st1 + key * 16, 64);
    LLMSERVE_TILE_STORE(3, st1 + (key + 16) * 16, 64);
  }
}

// outᵀ of dims [16c, 16c + 32) over the item's `steps` 32-key steps: A tiles
// from the V blocks (rows bs apart) or, at step `tail_step`, from the
// zero-padded copy (rows 32 apart); B tiles from the Pᵀ tiles. Stored to
// ot0 / ot1 rows.
template <bool kTwoRowTiles>
LLMSERVE_AVX512 void ValueDims(const uint16_t* const* v_blocks, size_t bs, size_t c, const uint32_t* pt,
                               size_t steps, const uint16_t* v_tail, size_t tail_step, float* ot0, float* ot1) {
  LLMSERVE_TILE_ZERO(0);
  LLMSERVE_TILE_ZERO(1);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_ZERO(2);
    LLMSERVE_TILE_ZERO(3);
  }
  const size_t steps_per_block = bs / 32;
  for (size_t step = 0; step < steps; ++step) {
    const uint16_t* a;
    size_t row_bytes;
    if (step == tail_step) {
      a = v_tail + 16 * c * 32;
      row_bytes = 64;
    } else {
      a = v_blocks[step / steps_per_block] + 16 * c * bs + 32 * (step % steps_per_block);
      row_bytes = bs * sizeof(uint16_t);
    }
    LLMSERVE_TILE_LOAD(4, a, row_bytes);
    LLMSERVE_TILE_LOAD(6, pt + step * kTileWords, 64);
    LLMSERVE_TILE_DP(0, 4, 6);
    LLMSERVE_TILE_LOAD(5, a + 16 * row_bytes / sizeof(uint16_t), row_bytes);
    LLMSERVE_TILE_DP(1, 5, 6);
    if constexpr (kTwoRowTiles) {
      LLMSERVE_TILE_LOAD(7, pt + (steps + step) * kTileWords, 64);
      LLMSERVE_TILE_DP(2, 4, 7);
      LLMSERVE_TILE_DP(3, 5, 7);
    }
  }
  LLMSERVE_TILE_STORE(0, ot0 + 16 * c * 16, 64);
  LLMSERVE_TILE_STORE(1, ot0 + (16 * c + 16) * 16, 64);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_STORE(2, ot1 + 16 * c * 16, 64);
    LLMSERVE_TILE_STORE(3, ot1 + (16 * c + 16) * 16, 64);
  }
}

// Pairs (x[2p], x[2p + 1]), p = 0..15, of 32 floats rounded to bf16, as
// 32-bit words (element 2p in the low half: the B-tile pair order).
LLMSERVE_AVX512 inline __m512i Bf16Pairs(const float* x) {
  const __m512i lo = RoundToBf16(_mm512_loadu_ps(x)), hi = RoundToBf16(_mm512_loadu_ps(x + 16));
  const __m512i even_idx = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i even = _mm512_permutex2var_epi32(lo, even_idx, hi);
  const __m512i odd = _mm512_permutex2var_epi32(lo, _mm512_add_epi32(even_idx, _mm512_set1_epi32(1)), hi);
  return _mm512_or_si512(even, _mm512_slli_epi32(odd, 16));
}

// Lane i of the 16-float stride: 16 * i.
LLMSERVE_AVX512 inline __m512i Stride16() {
  return _mm512_mullo_epi32(_mm512_set1_epi32(16), _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
                                                                   0));
}

// Writes 32 floats x (a query row's 32 dims, or a P row's 32 keys), rounded
// to bf16, as column r of a B tile (row p: the pair 2p, 2p + 1).
LLMSERVE_AVX512 inline void StoreColumn(const float* x, uint32_t* tile, size_t r) {
  _mm512_i32scatter_epi32(tile + r, Stride16(), Bf16Pairs(x), 4);
}

// The softmax of a row tile's rows, in one of two ways that give the same
// bits: the scaled scores x (scoresᵀ column r of st, [span][16]) of row r's
// keys [lf, ll] of the span, m = their max, e = exp(x - m) (0 outside
// [lf, ll]) rounded to bf16 into column r of the Pᵀ tiles pt, and 1 / sum,
// the sum of e taken in 16 partial sums by position mod 16 (each in position
// order; spans start at a block) combined by Tree16.

// x[0] + ... + x[15] as halves added pairwise: x[i] += x[i + w] for w = 8,
// 4, 2, 1.
inline float Tree16(float* x) {
  for (size_t w = 8; w >= 1; w /= 2) {
    for (size_t i = 0; i < w; ++i) x[i] += x[i + w];
  }
  return x[0];
}

// Tree16 of 16 vectors, lane by lane (the same additions in the same order).
LLMSERVE_AVX512 inline __m512 Tree16(__m512* x) {
  for (size_t w = 8; w >= 1; w /= 2) {
    for (size_t i = 0; i < w; ++i) x[i] = _mm512_add_ps(x[i], x[i + w]);
  }
  return x[0];
}

// Row by row (a decode's row tile holds only its GQA group): returns row r's
// 1 / sum; `row` holds span floats of scratch.
LLMSERVE_AVX512 float SoftmaxRow(const float* st, size_t span, size_t r, size_t lf, size_t ll, float scale,
                                 float* row, uint32_t* pt) {
  const __m512 vs = _mm512_set1_ps(scale);
  const __m512i stride = Stride16();
  __m512 mx = _mm512_set1_ps(-INFINITY);
  auto live = [](size_t j0, size_t lf, size_t ll) {  // lanes of keys j0.. inside [lf, ll]
    const size_t lo = lf > j0 ? std::min<size_t>(lf - j0, 16) : 0;
    const size_t hi = ll + 1 > j0 ? std::min<size_t>(ll + 1 - j0, 16) : 0;
    return lo < hi ? static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1)) : static_cast<__mmask16>(0);
  };
  for (size_t j0 = 0; j0 < span; j0 += 16) {
    const __m512 x = _mm512_mul_ps(_mm512_i32gather_ps(stride, st + 16 * j0 + r, 4), vs);
    _mm512_storeu_ps(row + j0, x);
    mx = _mm512_mask_max_ps(mx, live(j0, lf, ll), mx, x);
  }
  const __m512 vm = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 sum = _mm512_setzero_ps();
  for (size_t j0 = 0; j0 < span; j0 += 16) {
    const __m512 e = _mm512_maskz_mov_ps(live(j0, lf, ll), ExpAvx512(_mm512_sub_ps(_mm512_loadu_ps(row + j0), vm)));
    _mm512_storeu_ps(row + j0, e);
    sum = _mm512_add_ps(sum, e);
  }
  for (size_t step = 0; step < span / 32; ++step) StoreColumn(row + 32 * step, pt + step * kTileWords, r);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return 1.0f / Tree16(lanes);
}

// Lanes whose key range [first, last] holds key j.
LLMSERVE_AVX512 inline __mmask16 LiveLanes(__m512i first, __m512i last, size_t j) {
  const __m512i vj = _mm512_set1_epi32(static_cast<int>(j));
  return static_cast<__mmask16>(_mm512_cmp_epi32_mask(first, vj, _MM_CMPINT_LE) &
                                _mm512_cmp_epi32_mask(vj, last, _MM_CMPINT_LE));
}

// All rows at once, one lane per row (a prefill's full row tiles): lanes
// past the tile's rows have lf > ll. Scales st in place; 1 / sum to inv_sum.
LLMSERVE_AVX512 void SoftmaxTile(float* st, size_t span, const int32_t* lf, const int32_t* ll, float scale,
                                 uint32_t* pt, float* inv_sum) {
  const __m512i first = _mm512_loadu_si512(lf), last = _mm512_loadu_si512(ll);
  const __m512 vs = _mm512_set1_ps(scale);
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (size_t j = 0; j < span; ++j) {
    const __m512 x = _mm512_mul_ps(_mm512_load_ps(st + 16 * j), vs);
    _mm512_store_ps(st + 16 * j, x);
    mx = _mm512_mask_max_ps(mx, LiveLanes(first, last, j), mx, x);
  }
  __m512 sum[16];  // partial sums by position mod 16
  for (__m512& v : sum) v = _mm512_setzero_ps();
  for (size_t j = 0; j < span; j += 2) {
    const __m512 x0 = _mm512_sub_ps(_mm512_load_ps(st + 16 * j), mx);
    const __m512 x1 = _mm512_sub_ps(_mm512_load_ps(st + 16 * (j + 1)), mx);
    const __m512 e0 = _mm512_maskz_mov_ps(LiveLanes(first, last, j), ExpAvx512(x0));
    const __m512 e1 = _mm512_maskz_mov_ps(LiveLanes(first, last, j + 1), ExpAvx512(x1));
    sum[j % 16] = _mm512_add_ps(sum[j % 16], e0);
    sum[(j + 1) % 16] = _mm512_add_ps(sum[(j + 1) % 16], e1);
    // Row (j % 32) / 2 of tile j / 32: the pairs (p[r][j], p[r][j + 1]).
    _mm512_store_si512(pt + (j / 32) * kTileWords + (j % 32) / 2 * 16,
                       _mm512_or_si512(RoundToBf16(e0), _mm512_slli_epi32(RoundToBf16(e1), 16)));
  }
  const __m512 total = Tree16(sum);
  _mm512_storeu_ps(inv_sum, _mm512_div_ps(_mm512_set1_ps(1.0f), total));
}

// Row tiles of at least this many rows take SoftmaxTile.
constexpr int kTileSoftmaxRows = 8;

struct Context {
  const float* q;
  size_t q_stride;
  const PagedAttentionBatch* b;
  const PagedAttentionShape* s;
  size_t group;
  size_t tile_tokens;  // tokens per row tile
  const void* k_cache;
  const void* v_cache;
  float* out;
  size_t out_stride;
};

// RunItem's K/V operands: points kb[i] / vb[i] at block b_lo + i of the
// item's request (`table`) for KV head it.kv_head, bf16 in the tile-ready
// layout: the call's staged copy, the bf16 cache itself, or this item's
// rounding of an fp32 cache into w.k / w.v. Inlined into RunItem.
LLMSERVE_AVX512 __attribute__((always_inline)) inline void SpanBlocks(
    const Context& cx, const Item& it, const Staged* staged, const int32_t* table, size_t b_lo, size_t blocks,
    Scratch& w, std::vector<const uint16_t*>& kb, std::vector<const uint16_t*>& vb) {
  const PagedAttentionShape& s = *cx.s;
  const size_t bs = s.block_size, hd = s.head_dim;
  kb.resize(blocks);
  vb.resize(blocks);
  const size_t elems = bs * hd;
  if (staged == nullptr && s.kv_dtype == KvDType::kF32 && w.k.size() < blocks * elems) {
    w.k.resize(blocks * elems);
    w.v.resize(blocks * elems);
  }
  for (size_t i = 0; i < blocks; ++i) {
    const size_t base = TileReadyBlockOffset(s, static_cast<size_t>(table[b_lo + i]), it.kv_head);
    if (staged != nullptr) {
      kb[i] = staged->k + (b_lo + i) * elems;
      vb[i] = staged->v + (b_lo + i) * elems;
    } else if (s.kv_dtype == KvDType::kF32) {
      RoundBlock(static_cast<const float*>(cx.k_cache) + base, elems, w.k.data() + i * elems);
      RoundBlock(static_cast<const float*>(cx.v_cache) + base, elems, w.v.data() + i * elems);
      kb[i] = w.k.data() + i * elems;
      vb[i] = w.v.data() + i * elems;
    } else {
      kb[i] = static_cast<const uint16_t*>(cx.k_cache) + base;
      vb[i] = static_cast<const uint16_t*>(cx.v_cache) + base;
    }
  }
}

// RunItem's softmax: for each row tile (rows0 rows over st0, rows1 over st1;
// rows1 == 0: one tile) the softmax of its rows' scores into its Pᵀ tiles in
// w.pt and 1 / sum into inv_sum, by tile (SoftmaxTile) or row by row
// (SoftmaxRow). first / last: each token's key range, positions; the span
// starts at block b_lo. Inlined into RunItem.
LLMSERVE_AVX512 __attribute__((always_inline)) inline void SoftmaxRowTiles(
    const Context& cx, size_t n, int rows0, int rows1, const size_t* first, const size_t* last, size_t b_lo,
    size_t span, size_t steps, float* st0, float* st1, Scratch& w, float* inv_sum) {
  const PagedAttentionShape& s = *cx.s;
  const size_t bs = s.block_size, group = cx.group;
  for (size_t rt = 0; rt < (rows1 > 0 ? 2u : 1u); ++rt) {
    float* st = rt == 0 ? st0 : st1;
    uint32_t* pt = w.pt.data() + rt * steps * kTileWords;
    const size_t tb = rt * cx.tile_tokens, te = std::min(n, tb + cx.tile_tokens);
    if ((rt == 0 ? rows0 : rows1) >= kTileSoftmaxRows) {
      alignas(64) int32_t lf[16], ll[16];  // empty lanes: 1 > 0
      std::fill(lf, lf + 16, 1);
      std::fill(ll, ll + 16, 0);
      for (size_t i = tb; i < te; ++i) {
        for (size_t g = 0; g < group; ++g) {
          lf[(i - tb) * group + g] = static_cast<int32_t>(first[i] - b_lo * bs);
          ll[(i - tb) * group + g] = static_cast<int32_t>(last[i] - b_lo * bs);
        }
      }
      SoftmaxTile(st, span, lf, ll, s.scale, pt, inv_sum + rt * kTileRows);
      continue;
    }
    for (size_t i = tb; i < te; ++i) {
      for (size_t g = 0; g < group; ++g) {
        const size_t r = (i - tb) * group + g;
        inv_sum[rt * kTileRows + r] =
            SoftmaxRow(st, span, r, first[i] - b_lo * bs, last[i] - b_lo * bs, s.scale, w.row.data(), pt);
      }
    }
  }
}

LLMSERVE_AVX512 void RunItem(const Context& cx, const Item& it, const Staged* staged, Scratch& w) {
  const PagedAttentionShape& s = *cx.s;
  const PagedAttentionBatch& b = *cx.b;
  const size_t bs = s.block_size, hd = s.head_dim, group = cx.group, n = it.te - it.tb;
  const size_t tokens0 = std::min(n, cx.tile_tokens);
  const int rows0 = static_cast<int>(tokens0 * group), rows1 = static_cast<int>((n - tokens0) * group);
  const int32_t* table = b.block_tables + static_cast<size_t>(b.token_request[it.tb]) * b.block_table_stride;
  size_t first[kRowTiles * kTileRows], last[kRowTiles * kTileRows];
  size_t kfirst = SIZE_MAX, klast = 0;
  for (size_t i = 0; i < n; ++i) {
    last[i] = static_cast<size_t>(b.positions[it.tb + i]);
    first[i] = s.sliding_window > 0 && last[i] + 1 > s.sliding_window ? last[i] + 1 - s.sliding_window : 0;
    kfirst = std::min(kfirst, first[i]);
    klast = std::max(klast, last[i]);
  }
  // The item's keys: 32-key steps from block b_lo's first to the one holding
  // klast (later slots are never read).
  const size_t b_lo = kfirst / bs, blocks = klast / bs - b_lo + 1;
  const size_t steps = (klast - b_lo * bs) / 32 + 1, span = 32 * steps;
  // The span's K/V blocks (bf16, tile-ready layout).
  thread_local std::vector<const uint16_t*> kb, vb;
  SpanBlocks(cx, it, staged, table, b_lo, blocks, w, kb, vb);
  // The V step holding the last position, keys past it zeroed.
  const size_t tail_step = steps - 1;
  const size_t tail_keys = (klast - b_lo * bs) % 32 + 1;
  if (w.v_tail.size() < hd * 32) w.v_tail.resize(hd * 32);
  {
    const __mmask32 keep = tail_keys >= 32 ? 0xffffffffu : (1u << tail_keys) - 1;
    const uint16_t* src = vb[tail_step * 32 / bs] + (tail_step * 32) % bs;
    for (size_t d = 0; d < hd; ++d) {
      _mm512_store_si512(w.v_tail.data() + d * 32, _mm512_maskz_loadu_epi16(keep, src + d * bs));
    }
  }
  // Qᵀ tiles: [row tile][hd / 32][16 pairs][16 rows].
  const size_t kk_count = hd / 32;
  if (w.qt.size() < kRowTiles * kk_count * kTileWords) w.qt.resize(kRowTiles * kk_count * kTileWords);
  for (size_t i = 0; i < n; ++i) {
    const size_t rt = i / cx.tile_tokens;
    for (size_t g = 0; g < group; ++g) {
      const size_t r = (i % cx.tile_tokens) * group + g;
      const float* qrow = cx.q + (it.tb + i) * cx.q_stride + (it.kv_head * group + g) * hd;
      for (size_t kk = 0; kk < kk_count; ++kk) {
        StoreColumn(qrow + 32 * kk, w.qt.data() + (rt * kk_count + kk) * kTileWords, r);
      }
    }
  }
  if (w.st.size() < kRowTiles * span * 16) w.st.resize(kRowTiles * span * 16);
  if (w.row.size() < span) w.row.resize(span);
  if (w.pt.size() < kRowTiles * steps * kTileWords) w.pt.resize(kRowTiles * steps * kTileWords);
  if (w.ot.size() < kRowTiles * hd * 16) w.ot.resize(kRowTiles * hd * 16);
  float* st0 = w.st.data();
  float* st1 = st0 + span * 16;
  float* ot0 = w.ot.data();
  float* ot1 = ot0 + hd * 16;
  amx::LoadConfig(ItemConfig(rows0, rows1));
  // scoresᵀ, one 32-key step (two 16-key groups) at a time.
  for (size_t step = 0; step < steps; ++step) {
    const uint16_t* k0 = kb[step * 32 / bs] + (step * 32) % bs * hd;
    if (rows1 > 0) {
      ScoreKeys<true>(k0, hd, w.qt.data(), st0, st1, 32 * step);
    } else {
      ScoreKeys<false>(k0, hd, w.qt.data(), st0, st1, 32 * step);
    }
  }
  // Softmax and Pᵀ.
  float inv_sum[kRowTiles * kTileRows];
  SoftmaxRowTiles(cx, n, rows0, rows1, first, last, b_lo, span, steps, st0, st1, w, inv_sum);
  // outᵀ, 32 dims at a time.
  for (size_t c = 0; c < hd / 16; c += 2) {
    if (rows1 > 0) {
      ValueDims<true>(vb.data(), bs, c, w.pt.data(), steps, w.v_tail.data(), tail_step, ot0, ot1);
    } else {
      ValueDims<false>(vb.data(), bs, c, w.pt.data(), steps, w.v_tail.data(), tail_step, ot0, ot1);
    }
  }
  // out = outᵀ (column r) / sum.
  const __m512i column = Stride16();
  for (size_t i = 0; i < n; ++i) {
    const size_t rt = i / cx.tile_tokens;
    for (size_t g = 0; g < group; ++g) {
      const size_t r = (i % cx.tile_tokens) * group + g;
      const float* src = (rt == 0 ? ot0 : ot1) + r;
      float* dst = cx.out + (it.tb + i) * cx.out_stride + (it.kv_head * group + g) * hd;
      const __m512 inv = _mm512_set1_ps(inv_sum[rt * kTileRows + r]);
      for (size_t d = 0; d < hd; d += 16) {
        _mm512_storeu_ps(dst + d, _mm512_mul_ps(_mm512_i32gather_ps(column, src + d * 16, 4), inv));
      }
    }
  }
}

}  // namespace

bool AmxAttentionUsable(const PagedAttentionShape& s) {
  if (!s.bf16_products || IsFp8(s.kv_dtype) || ActiveIsa() != Isa::kAmx || !GetCpuFeatures().avx512_bf16)
    return false;
  if (s.num_kv_heads == 0 || s.num_q_heads % s.num_kv_heads != 0) return false;
  const size_t group = s.num_q_heads / s.num_kv_heads;
  return group >= 1 && group <= kTileRows && s.head_dim % 32 == 0 && s.head_dim > 0 && s.block_size % 32 == 0 &&
         s.block_size > 0;
}

void PagedAttentionAmx(const float* q, size_t q_stride, const PagedAttentionBatch& b, const PagedAttentionShape& s,
                       const void* k_cache, const void* v_cache, float* out, size_t out_stride, ThreadPool& pool) {
  if (b.tokens == 0) return;
  const size_t group = s.num_q_heads / s.num_kv_heads;
  Context cx{q, q_stride, &b, &s, group, kTileRows / group, k_cache, v_cache, out, out_stride};
  const size_t item_tokens = kRowTiles * cx.tile_tokens;
  // Runs of up to item_tokens consecutive tokens of one request. With an
  // fp32 cache, a request with more tokens than one item gets its blocks
  // rounded once per KV head ("staged"); other items round their own.
  struct Run {
    size_t tb, te, request_slot;  // request_slot: index into `staged_requests`, or SIZE_MAX
  };
  std::vector<Run> runs;
  struct StagedRequest {
    size_t request, blocks;
  };
  std::vector<StagedRequest> staged_requests;
  size_t keys = 0;
  for (size_t t = 0; t < b.tokens;) {
    size_t e = t + 1;
    while (e < b.tokens && b.token_request[e] == b.token_request[t]) ++e;
    size_t slot = SIZE_MAX;
    if (s.kv_dtype == KvDType::kF32 && e - t > item_tokens) {
      size_t last = 0;
      for (size_t i = t; i < e; ++i) last = std::max(last, static_cast<size_t>(b.positions[i]));
      slot = staged_requests.size();
      staged_requests.push_back({static_cast<size_t>(b.token_request[t]), last / s.block_size + 1});
    }
    for (size_t r = t; r < e; r += item_tokens) runs.push_back({r, std::min(e, r + item_tokens), slot});
    for (size_t i = t; i < e; ++i) keys += static_cast<size_t>(b.positions[i]) + 1;
    t = e;
  }
  const size_t work = keys * s.num_q_heads * s.head_dim;
  auto run_items = [&](size_t head_begin, size_t head_end, const std::vector<Staged>* staged) {
    const size_t items = runs.size() * (head_end - head_begin);
    const size_t chunk = work < (size_t{1} << 18) ? items : 1;
    pool.ParallelForChunks(items, chunk, [&](size_t begin, size_t end, size_t) {
      thread_local Scratch scratch;
      for (size_t index = begin; index < end; ++index) {
        const Run& r = runs[index % runs.size()];
        const Item it{head_begin + index / runs.size(), r.tb, r.te};
        const Staged* st = staged != nullptr && r.request_slot != SIZE_MAX ? &(*staged)[r.request_slot] : nullptr;
        RunItem(cx, it, st, scratch);
      }
      amx::Release();
    });
  };
  if (staged_requests.empty()) {
    run_items(0, s.num_kv_heads, nullptr);
    return;
  }
  // One KV head at a time: round the staged requests' blocks, then run.
  const size_t elems = s.block_size * s.head_dim;
  std::vector<size_t> offset(staged_requests.size() + 1, 0);
  for (size_t i = 0; i < staged_requests.size(); ++i) offset[i + 1] = offset[i] + staged_requests[i].blocks;
  thread_local Buffer stage_k, stage_v;
  if (stage_k.size() < offset.back() * elems) {
    stage_k.resize(offset.back() * elems);
    stage_v.resize(offset.back() * elems);
  }
  // (Pointers, not the thread_local names: the pool's threads write here.)
  uint16_t* const sk = stage_k.data();
  uint16_t* const sv = stage_v.data();
  std::vector<Staged> staged(staged_requests.size());
  for (size_t i = 0; i < staged.size(); ++i) staged[i] = {sk + offset[i] * elems, sv + offset[i] * elems};
  const auto* kc = static_cast<const float*>(k_cache);
  const auto* vc = static_cast<const float*>(v_cache);
  for (size_t h = 0; h < s.num_kv_heads; ++h) {
    pool.ParallelFor(offset.back(), 4, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin; i < end; ++i) {
        const size_t req = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), i) - offset.begin()) - 1;
        const int32_t* table = b.block_tables + staged_requests[req].request * b.block_table_stride;
        const size_t base = TileReadyBlockOffset(s, static_cast<size_t>(table[i - offset[req]]), h);
        RoundBlock(kc + base, elems, sk + i * elems);
        RoundBlock(vc + base, elems, sv + i * elems);
      }
    });
    run_items(h, h + 1, &staged);
  }
}

}  // namespace llmserve::kernels::cpu::internal
