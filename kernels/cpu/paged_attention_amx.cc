// Paged attention with bf16 products on AMX tiles (PagedAttentionShape::
// bf16_products; reached only after AmxAttentionUsable said yes).
//
// Work items: (KV head, up to 2 row tiles of one request's consecutive query
// tokens). A row tile is 16 rows: 16 / group tokens, each with its GQA group
// of query heads (row = token * group + head).
//
// Operands, all bf16 rounded to nearest even (q and p exactly as F32ToBf16;
// K/V of an fp32 cache by vcvtne2ps2bf16, which also flushes denormals):
//  * Q: per row tile, head_dim / 32 A tiles of 16 rows × 32 dims.
//  * K, per cache block: the block's keys in 16-key groups, each head_dim / 32
//    B tiles (row p holds the pairs (K[key][2p], K[key][2p + 1]) of 16 keys):
//    the "VNNI" layout tdpbf16ps wants. V, per block: 32-key steps, each
//    head_dim / 16 B tiles (row p holds (V[2p][d], V[2p + 1][d]) for 16 d).
//    Both are converted from the cache (fp32 or bf16, whose layouts stay as
//    paged_attention.h describes) into that layout: once per call for a
//    request with more query tokens than one item ("staged"), otherwise by
//    the item itself. Slots past the request's last position in this call
//    are written as zeros.
//  * P: the softmax numerators, rounded to bf16, in A tiles of 16 rows × 32
//    keys, zero outside the row's [first, last].
// Scores are 16 × 16 fp32 C tiles over head_dim in d order, stored, scaled
// and soft-maxed per row in fp32 (16 lanes starting at the row's first
// position, as the AVX-512 kernel does); out = (P · V) / sum, P · V
// accumulated over the 32-key steps in position order.
//
// Determinism (chunking, batch and prefix-cache invariance): a row's scores
// depend only on its query and the keys (each C element: tilezero, then one
// tdpbf16ps per 32 dims in order; rows of a tile do not interact). A row's
// softmax depends only on its own scores. Its P · V accumulators see the
// steps of the blocks its item spans, always aligned to absolute positions
// (multiples of 32); steps outside the row's [first, last] have p = 0 and
// finite (or zeroed) V, so they add exact zeros and leave the accumulator's
// value unchanged. So a token gives the same bits alone (a decode), in any
// item of a prefill, or after its prefix came from the cache; and staged and
// item-converted blocks hold the same values.
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
using FloatBuffer = std::vector<float, AlignedAllocator<float>>;

constexpr size_t kTileRows = 16;
constexpr size_t kRowTiles = 2;  // row tiles per item (each B tile serves both)

LLMSERVE_AVX512 inline __mmask16 LowMask(size_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1);
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

// One VNNI row from two runs of 16 fp32 cache elements, at elements lo and
// hi (lanes outside the masks read as 0): the pairs (lo[i], hi[i]) rounded to
// bf16 by vcvtne2ps2bf16 (nearest even; denormals become zero), the same
// instruction wherever a block is converted.
LLMSERVE_AVX512_BF16 inline void StoreF32Pairs(uint16_t* dst, const float* cache, size_t lo, __mmask16 mlo,
                                               size_t hi, __mmask16 mhi) {
  // [bf16(lo[0..15]), bf16(hi[0..15])], then interleaved.
  const __m512bh both =
      _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(mhi, cache + hi), _mm512_maskz_loadu_ps(mlo, cache + lo));
  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                         21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  _mm512_store_si512(dst, _mm512_permutexvar_epi16(order, (__m512i)both));
}

// u16 lane i of the VNNI rows built from two 32-element runs a, b: even lanes
// a[i / 2], odd lanes b[i / 2]; index base 0 takes elements 0..15,
// base 16 elements 16..31.
LLMSERVE_AVX512 inline __m512i InterleaveIndex(int base) {
  alignas(64) uint16_t idx[32];
  for (int i = 0; i < 32; ++i) idx[i] = static_cast<uint16_t>((i % 2 ? 32 : 0) + base + i / 2);
  return _mm512_load_si512(idx);
}

LLMSERVE_AVX512 inline __mmask32 LowMask32(size_t n) {
  return n >= 32 ? static_cast<__mmask32>(0xffffffffu) : static_cast<__mmask32>((1u << n) - 1);
}

// Converts block `block` of KV head `h` of a bf16 cache into the K and V tile
// layouts (k_dst, v_dst: BlockElems each, 64-byte aligned); slots >= valid
// are zeros. 32 elements of two cache rows per pair of loads, interleaved
// into two VNNI tile rows.
LLMSERVE_AVX512_BF16 void ConvertBf16Block(const PagedAttentionShape& s, const void* k_cache, const void* v_cache,
                                           size_t block, size_t h, size_t valid, uint16_t* k_dst, uint16_t* v_dst) {
  const size_t bs = s.block_size, hd = s.head_dim;
  const __m512i lo_idx = InterleaveIndex(0), hi_idx = InterleaveIndex(16);
  const auto* kc = static_cast<const uint16_t*>(k_cache);
  const auto* vc = static_cast<const uint16_t*>(v_cache);
  // K: element (d, slot) at kb + d * bs + slot; tiles (g, kk) and (g + 1, kk)
  // from slots 16g..16g+31 of dims d, d + 1.
  const size_t kb = KeyOffset(s, block, h, 0);
  for (size_t g = 0; g < bs / 16; g += 2) {
    const __mmask32 mask = LowMask32(valid > 16 * g ? valid - 16 * g : 0);
    for (size_t kk = 0; kk < hd / 32; ++kk) {
      uint16_t* tile0 = k_dst + (g * (hd / 32) + kk) * 512;
      uint16_t* tile1 = tile0 + (hd / 32) * 512;
      for (size_t p = 0; p < 16; ++p) {
        const size_t d = 32 * kk + 2 * p;
        const __m512i a = _mm512_maskz_loadu_epi16(mask, kc + kb + d * bs + 16 * g);
        const __m512i b = _mm512_maskz_loadu_epi16(mask, kc + kb + (d + 1) * bs + 16 * g);
        _mm512_store_si512(tile0 + p * 32, _mm512_permutex2var_epi16(a, lo_idx, b));
        _mm512_store_si512(tile1 + p * 32, _mm512_permutex2var_epi16(a, hi_idx, b));
      }
    }
  }
  // V: element (slot, d) at vb + slot * hd + d; tiles (st, c) and (st, c + 1)
  // from dims 16c..16c+31 of keys key, key + 1.
  const size_t vb = ValueOffset(s, block, h, 0);
  for (size_t st = 0; st < bs / 32; ++st) {
    for (size_t p = 0; p < 16; ++p) {
      const size_t key = 32 * st + 2 * p;
      const __mmask32 m0 = key < valid ? static_cast<__mmask32>(0xffffffffu) : 0;
      const __mmask32 m1 = key + 1 < valid ? static_cast<__mmask32>(0xffffffffu) : 0;
      for (size_t c = 0; c < hd / 16; c += 2) {
        const __m512i a = _mm512_maskz_loadu_epi16(m0, vc + vb + key * hd + 16 * c);
        const __m512i b = _mm512_maskz_loadu_epi16(m1, vc + vb + (key + 1) * hd + 16 * c);
        _mm512_store_si512(v_dst + ((st * (hd / 16) + c) * 16 + p) * 32, _mm512_permutex2var_epi16(a, lo_idx, b));
        _mm512_store_si512(v_dst + ((st * (hd / 16) + c + 1) * 16 + p) * 32, _mm512_permutex2var_epi16(a, hi_idx, b));
      }
    }
  }
}

// Elements (u16) of one block's converted K, and of its V.
inline size_t BlockElems(const PagedAttentionShape& s) { return s.block_size * s.head_dim; }

// ConvertBf16Block for an fp32 cache (K/V rounded to bf16).
LLMSERVE_AVX512_BF16 void ConvertF32Block(const PagedAttentionShape& s, const void* k_cache, const void* v_cache,
                                          size_t block, size_t h, size_t valid, uint16_t* k_dst, uint16_t* v_dst) {
  const size_t bs = s.block_size, hd = s.head_dim;
  const auto* kc = static_cast<const float*>(k_cache);
  const auto* vc = static_cast<const float*>(v_cache);
  // K: element (d, slot) at kb + d * bs + slot. Tile (g, kk) = keys 16g..,
  // dims 32kk..; its row p pairs dims 32kk + 2p, + 1.
  const size_t kb = KeyOffset(s, block, h, 0);
  for (size_t g = 0; g < bs / 16; ++g) {
    const __mmask16 mask = LowMask(valid > 16 * g ? valid - 16 * g : 0);
    for (size_t kk = 0; kk < hd / 32; ++kk) {
      uint16_t* tile = k_dst + (g * (hd / 32) + kk) * 512;
      for (size_t p = 0; p < 16; ++p) {
        const size_t d = 32 * kk + 2 * p;
        StoreF32Pairs(tile + p * 32, kc, kb + d * bs + 16 * g, mask, kb + (d + 1) * bs + 16 * g, mask);
      }
    }
  }
  // V: element (slot, d) at vb + slot * hd + d. Tile (st, c) = keys 32st..,
  // dims 16c..; its row p pairs keys 32st + 2p, + 1.
  const size_t vb = ValueOffset(s, block, h, 0);
  for (size_t st = 0; st < bs / 32; ++st) {
    for (size_t p = 0; p < 16; ++p) {
      const size_t key = 32 * st + 2 * p;
      const __mmask16 m0 = key < valid ? static_cast<__mmask16>(0xffff) : 0;
      const __mmask16 m1 = key + 1 < valid ? static_cast<__mmask16>(0xffff) : 0;
      for (size_t c = 0; c < hd / 16; ++c) {
        StoreF32Pairs(v_dst + ((st * (hd / 16) + c) * 16 + p) * 32, vc, vb + key * hd + 16 * c, m0,
                      vb + (key + 1) * hd + 16 * c, m1);
      }
    }
  }
}

void Convert(const PagedAttentionShape& s, const void* k_cache, const void* v_cache, size_t block, size_t h,
             size_t valid, uint16_t* k_dst, uint16_t* v_dst) {
  if (s.kv_dtype == KvDType::kBF16) {
    ConvertBf16Block(s, k_cache, v_cache, block, h, valid, k_dst, v_dst);
  } else {
    ConvertF32Block(s, k_cache, v_cache, block, h, valid, k_dst, v_dst);
  }
}

// One item: tokens [tb, te) of one request, against KV head h.
struct Item {
  size_t kv_head = 0;
  size_t tb = 0, te = 0;
};

// A request's blocks converted for one KV head: block i at k + i * elems.
struct Staged {
  const uint16_t* k = nullptr;
  const uint16_t* v = nullptr;
};

struct Scratch {
  Buffer q, p, k, v;
  FloatBuffer scores, out;
};

// C[rt][kg] = Q[rt] · K[kg] over head_dim for two 16-key groups (C tiles
// 0..3), stored to scores rows (stride ld floats) at column `col`.
template <bool kTwoRowTiles>
LLMSERVE_AVX512 void ScoreStep(const uint16_t* q, const uint16_t* k0, const uint16_t* k1, size_t kk_count,
                               float* scores, size_t ld, size_t col) {
  LLMSERVE_TILE_ZERO(0);
  LLMSERVE_TILE_ZERO(1);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_ZERO(2);
    LLMSERVE_TILE_ZERO(3);
  }
  for (size_t kk = 0; kk < kk_count; ++kk) {
    LLMSERVE_TILE_LOAD(4, q + kk * 512, 64);
    LLMSERVE_TILE_LOAD(6, k0 + kk * 512, 64);
    if constexpr (kTwoRowTiles) LLMSERVE_TILE_LOAD(5, q + (kk_count + kk) * 512, 64);
    LLMSERVE_TILE_DP(0, 4, 6);
    LLMSERVE_TILE_LOAD(7, k1 + kk * 512, 64);
    if constexpr (kTwoRowTiles) LLMSERVE_TILE_DP(2, 5, 6);
    LLMSERVE_TILE_DP(1, 4, 7);
    if constexpr (kTwoRowTiles) LLMSERVE_TILE_DP(3, 5, 7);
  }
  const size_t ldb = ld * sizeof(float);
  LLMSERVE_TILE_STORE(0, scores + col, ldb);
  LLMSERVE_TILE_STORE(1, scores + col + 16, ldb);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_STORE(2, scores + 16 * ld + col, ldb);
    LLMSERVE_TILE_STORE(3, scores + 16 * ld + col + 16, ldb);
  }
}

// out[rt][c], out[rt][c + 1] (C tiles 0..3) = Σ over 32-key steps of
// P[step][rt] · V[step][c, c + 1], steps in position order; stored to `out`
// rows (stride hd floats) at column 16c.
template <bool kTwoRowTiles>
LLMSERVE_AVX512 void ValueStep(const uint16_t* p, const uint16_t* const* v_blocks, size_t blocks,
                               size_t steps_per_block, size_t c, size_t hd, float* out) {
  LLMSERVE_TILE_ZERO(0);
  LLMSERVE_TILE_ZERO(1);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_ZERO(2);
    LLMSERVE_TILE_ZERO(3);
  }
  const size_t tiles_per_step = hd / 16;
  size_t step = 0;
  for (size_t b = 0; b < blocks; ++b) {
    for (size_t st = 0; st < steps_per_block; ++st, ++step) {
      const uint16_t* v = v_blocks[b] + (st * tiles_per_step + c) * 512;
      LLMSERVE_TILE_LOAD(4, p + step * kRowTiles * 512, 64);
      LLMSERVE_TILE_LOAD(6, v, 64);
      if constexpr (kTwoRowTiles) LLMSERVE_TILE_LOAD(5, p + (step * kRowTiles + 1) * 512, 64);
      LLMSERVE_TILE_DP(0, 4, 6);
      LLMSERVE_TILE_LOAD(7, v + 512, 64);
      if constexpr (kTwoRowTiles) LLMSERVE_TILE_DP(2, 5, 6);
      LLMSERVE_TILE_DP(1, 4, 7);
      if constexpr (kTwoRowTiles) LLMSERVE_TILE_DP(3, 5, 7);
    }
  }
  const size_t ldb = hd * sizeof(float);
  LLMSERVE_TILE_STORE(0, out + 16 * c, ldb);
  LLMSERVE_TILE_STORE(1, out + 16 * c + 16, ldb);
  if constexpr (kTwoRowTiles) {
    LLMSERVE_TILE_STORE(2, out + 16 * hd + 16 * c, ldb);
    LLMSERVE_TILE_STORE(3, out + 16 * hd + 16 * c + 16, ldb);
  }
}

// Rounds the query row (hd floats) into row r of the row tile's A tiles.
LLMSERVE_AVX512 void StoreQueryRow(const float* q, size_t hd, uint16_t* tiles, size_t r) {
  for (size_t kk = 0; kk < hd / 32; ++kk) {
    for (size_t half = 0; half < 2; ++half) {
      const __m512i bits = RoundToBf16(_mm512_loadu_ps(q + 32 * kk + 16 * half));
      _mm256_store_si256(reinterpret_cast<__m256i*>(tiles + kk * 512 + r * 32 + 16 * half),
                         _mm512_cvtepi32_epi16(bits));
    }
  }
}

// Scales the row's scores over [lf, lf + ctx) (local indices), turns them
// into softmax numerators in place and returns 1 / their sum. Lanes start at
// lf (the row's first position), whatever the item.
LLMSERVE_AVX512 float SoftmaxRow(float* sc, size_t lf, size_t ctx, float scale) {
  float* row = sc + lf;
  const __m512 vs = _mm512_set1_ps(scale);
  __m512 mx = _mm512_set1_ps(-INFINITY);
  size_t j = 0;
  for (; j < ctx; j += 16) {
    const __mmask16 m = LowMask(ctx - j);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + j), vs);
    _mm512_mask_storeu_ps(row + j, m, v);
    mx = _mm512_mask_max_ps(mx, m, mx, v);
  }
  const __m512 vm = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j < ctx; j += 16) {
    const __mmask16 m = LowMask(ctx - j);
    const __m512 e = _mm512_maskz_mov_ps(m, ExpAvx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + j), vm)));
    _mm512_mask_storeu_ps(row + j, m, e);
    sum = _mm512_add_ps(sum, e);
  }
  return 1.0f / _mm512_reduce_add_ps(sum);
}

// Row r of the P tiles (tiled [step][row tile][16][32]) from the numerators
// over local [lf, lf + ctx) of `sc`; zeros elsewhere in [0, span).
LLMSERVE_AVX512 void StorePRow(const float* sc, size_t lf, size_t ctx, size_t span, uint16_t* p, size_t rt,
                               size_t r) {
  for (size_t j0 = 0; j0 < span; j0 += 16) {
    const size_t lo = lf > j0 ? lf - j0 : 0;                        // first lane inside
    const size_t hi = lf + ctx > j0 ? std::min<size_t>(16, lf + ctx - j0) : 0;  // lanes below hi
    const __mmask16 m = lo < hi ? static_cast<__mmask16>(LowMask(hi) & ~LowMask(lo)) : 0;
    const __m512i bits = _mm512_maskz_mov_epi32(m, RoundToBf16(_mm512_maskz_loadu_ps(m, sc + j0)));
    const size_t step = j0 / 32, half = (j0 % 32) / 16;
    _mm256_store_si256(reinterpret_cast<__m256i*>(p + ((step * kRowTiles + rt) * 16 + r) * 32 + 16 * half),
                       _mm512_cvtepi32_epi16(bits));
  }
}

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
  const size_t b_lo = kfirst / bs, b_hi = klast / bs, blocks = b_hi - b_lo + 1, span = blocks * bs;
  const size_t elems = BlockElems(s);
  // K/V tiles of the blocks spanned.
  thread_local std::vector<const uint16_t*> kb, vb;
  kb.resize(blocks);
  vb.resize(blocks);
  if (staged != nullptr) {
    for (size_t i = 0; i < blocks; ++i) {
      kb[i] = staged->k + (b_lo + i) * elems;
      vb[i] = staged->v + (b_lo + i) * elems;
    }
  } else {
    if (w.k.size() < blocks * elems) {
      w.k.resize(blocks * elems);
      w.v.resize(blocks * elems);
    }
    for (size_t i = 0; i < blocks; ++i) {
      const size_t blk = b_lo + i;
      const size_t valid = std::min(bs, klast + 1 - blk * bs);
      Convert(s, cx.k_cache, cx.v_cache, static_cast<size_t>(table[blk]), it.kv_head, valid, w.k.data() + i * elems,
              w.v.data() + i * elems);
      kb[i] = w.k.data() + i * elems;
      vb[i] = w.v.data() + i * elems;
    }
  }
  // Q tiles: [row tile][hd / 32][16][32].
  const size_t kk_count = hd / 32;
  if (w.q.size() < kRowTiles * kk_count * 512) w.q.resize(kRowTiles * kk_count * 512);
  for (size_t i = 0; i < n; ++i) {
    const size_t rt = i / cx.tile_tokens;
    for (size_t g = 0; g < group; ++g) {
      const size_t r = (i % cx.tile_tokens) * group + g;
      StoreQueryRow(cx.q + (it.tb + i) * cx.q_stride + (it.kv_head * group + g) * hd, hd,
                    w.q.data() + rt * kk_count * 512, r);
    }
  }
  if (w.scores.size() < kRowTiles * kTileRows * span) w.scores.resize(kRowTiles * kTileRows * span);
  if (w.p.size() < kRowTiles * kTileRows * span) w.p.resize(kRowTiles * kTileRows * span);
  if (w.out.size() < kRowTiles * kTileRows * hd) w.out.resize(kRowTiles * kTileRows * hd);
  amx::LoadConfig(amx::MakeConfig(rows0, rows1));
  // Scores: two 16-key groups at a time.
  for (size_t i = 0; i < blocks; ++i) {
    for (size_t g = 0; g < bs / 16; g += 2) {
      const uint16_t* k0 = kb[i] + g * kk_count * 512;
      const uint16_t* k1 = k0 + kk_count * 512;
      if (rows1 > 0) {
        ScoreStep<true>(w.q.data(), k0, k1, kk_count, w.scores.data(), span, i * bs + 16 * g);
      } else {
        ScoreStep<false>(w.q.data(), k0, k1, kk_count, w.scores.data(), span, i * bs + 16 * g);
      }
    }
  }
  // Softmax per row; P tiles.
  float inv_sum[kRowTiles * kTileRows];
  for (size_t i = 0; i < n; ++i) {
    const size_t rt = i / cx.tile_tokens;
    const size_t lf = first[i] - b_lo * bs, ctx = last[i] - first[i] + 1;
    for (size_t g = 0; g < group; ++g) {
      const size_t r = (i % cx.tile_tokens) * group + g;
      float* sc = w.scores.data() + (rt * kTileRows + r) * span;
      inv_sum[rt * kTileRows + r] = SoftmaxRow(sc, lf, ctx, s.scale);
      StorePRow(sc, lf, ctx, span, w.p.data(), rt, r);
    }
  }
  // P · V, 32 output dims at a time.
  for (size_t c = 0; c < hd / 16; c += 2) {
    if (rows1 > 0) {
      ValueStep<true>(w.p.data(), vb.data(), blocks, bs / 32, c, hd, w.out.data());
    } else {
      ValueStep<false>(w.p.data(), vb.data(), blocks, bs / 32, c, hd, w.out.data());
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t rt = i / cx.tile_tokens;
    for (size_t g = 0; g < group; ++g) {
      const size_t r = (i % cx.tile_tokens) * group + g;
      const float* src = w.out.data() + (rt * kTileRows + r) * hd;
      float* dst = cx.out + (it.tb + i) * cx.out_stride + (it.kv_head * group + g) * hd;
      const __m512 inv = _mm512_set1_ps(inv_sum[rt * kTileRows + r]);
      for (size_t d = 0; d < hd; d += 16) _mm512_storeu_ps(dst + d, _mm512_mul_ps(_mm512_loadu_ps(src + d), inv));
    }
  }
}

}  // namespace

bool AmxAttentionUsable(const PagedAttentionShape& s) {
  if (!s.bf16_products || ActiveIsa() != Isa::kAmx || !GetCpuFeatures().avx512_bf16) return false;
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
  // Runs of up to item_tokens consecutive tokens of one request; a request
  // with more tokens than one item gets its blocks staged.
  struct Run {
    size_t tb, te, request_slot;  // request_slot: index into `staged_requests`, or SIZE_MAX
  };
  std::vector<Run> runs;
  struct StagedRequest {
    size_t request, blocks, last;
  };
  std::vector<StagedRequest> staged_requests;
  size_t keys = 0;
  for (size_t t = 0; t < b.tokens;) {
    size_t e = t + 1;
    while (e < b.tokens && b.token_request[e] == b.token_request[t]) ++e;
    size_t slot = SIZE_MAX;
    if (e - t > item_tokens) {
      size_t last = 0;
      for (size_t i = t; i < e; ++i) last = std::max(last, static_cast<size_t>(b.positions[i]));
      slot = staged_requests.size();
      staged_requests.push_back({static_cast<size_t>(b.token_request[t]), last / s.block_size + 1, last});
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
  // One KV head at a time: convert the staged requests' blocks, then run.
  const size_t elems = BlockElems(s);
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
  for (size_t h = 0; h < s.num_kv_heads; ++h) {
    pool.ParallelFor(offset.back(), 4, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin; i < end; ++i) {
        const size_t req = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), i) - offset.begin()) - 1;
        const StagedRequest& sr = staged_requests[req];
        const size_t blk = i - offset[req];
        const int32_t* table = b.block_tables + sr.request * b.block_table_stride;
        const size_t valid = std::min(s.block_size, sr.last + 1 - blk * s.block_size);
        Convert(s, k_cache, v_cache, static_cast<size_t>(table[blk]), h, valid, sk + i * elems, sv + i * elems);
      }
    });
    run_items(h, h + 1, &staged);
  }
}

}  // namespace llmserve::kernels::cpu::internal
