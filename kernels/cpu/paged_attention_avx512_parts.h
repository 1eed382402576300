#pragma once
// Internal to the AVX-512 attention tiles (paged_attention_avx512.cc with fp32
// products, paged_attention_dpbf16.cc with bf16 pairs): the query rows of a
// tile, the scaled score store and the in-place softmax numerators, which
// both kernels share so a row's softmax is the same code whichever ran.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/cpu/paged_attention_item.h"

namespace llmserve::kernels::cpu::internal {

inline constexpr size_t kMaxTileRows = kMaxTileTokens * 16;

// One query row (token, head) of a tile.
struct RowInfo {
  const float* q;
  size_t first, last;
  float* scores;  // score of key j at scores[j - first]
};

// The tile's rows (token-major, the group's heads inside), each with a
// stretch of `scores`, and the key range any of them reads. Returns the row
// count.
inline size_t TileRows(const AttentionTile& t, size_t group, size_t hd, float* scores, RowInfo* rows,
                       size_t* kfirst, size_t* klast) {
  size_t lo = t.first[0], hi = t.last[0], stride = 0;
  for (size_t i = 0; i < t.tokens; ++i) {
    lo = std::min(lo, t.first[i]);
    hi = std::max(hi, t.last[i]);
    stride = std::max(stride, t.last[i] - t.first[i] + 1);
  }
  for (size_t i = 0; i < t.tokens; ++i) {
    for (size_t g = 0; g < group; ++g) {
      rows[i * group + g] = {t.q[i] + g * hd, t.first[i], t.last[i], scores + (i * group + g) * stride};
    }
  }
  *kfirst = lo;
  *klast = hi;
  return t.tokens * group;
}

// Read-ahead of the cache. One KV head's block is several KiB, the blocks of
// a request are scattered, and the hardware prefetcher starts over at every
// page, so a decode's attention waited on memory for most of its time
// (figures: docs/perf/2026-11-25-zen5-attention-read-ahead.md). While the
// keys of block b are scored, the next block's keys come in (after the last,
// the first block's values); while a value row is used, the row one block
// ahead. Hints only: they never change a result, and an address they compute
// past the cache is harmless.

// Where the score pass over block b reads ahead: the bytes of the next key
// block, or of the first value block after the last key block.
template <size_t kElementBytes>
inline const char* KeyReadAhead(const PagedAttentionShape& s, const AttentionTile& t, size_t b, size_t kfirst,
                                size_t klast, const void* k_cache, const void* v_cache) {
  const size_t bs = s.block_size;
  if (b < klast / bs) {
    return static_cast<const char*>(k_cache) +
           kElementBytes * KeyOffset(s, static_cast<size_t>(t.table[b + 1]), t.kv_head, 0);
  }
  return static_cast<const char*>(v_cache) +
         kElementBytes * ValueOffset(s, static_cast<size_t>(t.table[kfirst / bs]), t.kv_head, 0);
}

// The value row of `slot` in the block after `block`.
template <size_t kElementBytes>
inline const char* ValueRowAhead(const PagedAttentionShape& s, const AttentionTile& t, size_t block, size_t slot,
                                 const void* v_cache) {
  return static_cast<const char*>(v_cache) +
         kElementBytes * ValueOffset(s, static_cast<size_t>(t.table[block + 1]), t.kv_head, slot);
}

// Prefetches the cache lines of [p, p + bytes) into L1.
inline void PrefetchLines(const char* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

// Scales and stores the scores of keys j0..j0+15 (lanes in `mask`) for RN rows.
template <int RN>
__attribute__((target("avx512f"))) inline void StoreScores(const RowInfo* rows, const __m512* acc, size_t j0,
                                                           __mmask16 mask, __m512 scale) {
  for (int r = 0; r < RN; ++r) {
    const RowInfo& row = rows[r];
    if (j0 > row.last || j0 + 15 < row.first) continue;
    const size_t lo = row.first > j0 ? row.first - j0 : 0;
    const size_t hi = std::min<size_t>(15, row.last - j0);  // inclusive
    const __mmask16 keep = static_cast<__mmask16>(mask & LowMask(hi + 1) & ~LowMask(lo));
    if (keep == 0) continue;
    const __m512 s = _mm512_maskz_compress_ps(keep, _mm512_mul_ps(acc[r], scale));
    _mm512_mask_storeu_ps(row.scores + (j0 + lo - row.first), LowMask(__builtin_popcount(keep)), s);
  }
}

// Replaces each row's scores by exp(score - row max) and sets inv_sum[r] to
// 1 / their sum (16 lanes in position order, then the lanes' sum).
__attribute__((target("avx512f"))) inline void SoftmaxNumerators(const RowInfo* rows, size_t nrows, float* inv_sum) {
  for (size_t r = 0; r < nrows; ++r) {
    float* sc = rows[r].scores;
    const size_t ctx = rows[r].last - rows[r].first + 1;
    __m512 mx = _mm512_set1_ps(-INFINITY);
    size_t j = 0;
    for (; j + 16 <= ctx; j += 16) mx = _mm512_max_ps(mx, _mm512_loadu_ps(sc + j));
    float m = _mm512_reduce_max_ps(mx);
    for (; j < ctx; ++j) m = std::max(m, sc[j]);
    const __m512 vm = _mm512_set1_ps(m);
    __m512 sum = _mm512_setzero_ps();
    for (j = 0; j + 16 <= ctx; j += 16) {
      const __m512 e = ExpAvx512(_mm512_sub_ps(_mm512_loadu_ps(sc + j), vm));
      _mm512_storeu_ps(sc + j, e);
      sum = _mm512_add_ps(sum, e);
    }
    if (j < ctx) {
      const __mmask16 m16 = LowMask(ctx - j);
      const __m512 e = _mm512_maskz_mov_ps(m16, ExpAvx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m16, sc + j), vm)));
      _mm512_mask_storeu_ps(sc + j, m16, e);
      sum = _mm512_add_ps(sum, e);
    }
    inv_sum[r] = 1.0f / _mm512_reduce_add_ps(sum);
  }
}

}  // namespace llmserve::kernels::cpu::internal
