// Attention with bf16 products on AVX512-BF16 (vdpbf16ps), for shapes with
// bf16_products on CPUs without AMX: the tile of AttendTileAvx512 with its
// two reductions done on bf16 pairs. The cache keeps the standard layout
// (K transposed per block, V row-major).
//
// Scores: for 16 consecutive keys, the key rows of dimensions d and d + 1
// are interleaved into one vector of 16 (k_d, k_d+1) pairs, and a row's 16
// scores are acc = vdpbf16ps(acc, (q_d, q_d+1), pairs) for d = 0, 2, 4, ….
// Values: for positions j and j + 1 of a row's context (pairs counted from
// the row's first position), the two value rows are interleaved likewise and
// multiplied by the pair of softmax numerators (p_j, p_j+1).
//
// Rounding: q, the softmax numerators and (for an fp32 cache) K and V are
// rounded to bf16 to nearest even; products are exact and the sums fp32.
// Numerics: each reduction runs in a fixed order that depends only on the
// row (its query, first and last position): never on the other rows of the
// tile, the chunking of the prompt or the thread.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/paged_attention_avx512_parts.h"

#define LLMSERVE_DPBF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace llmserve::kernels::cpu::internal {
namespace {

// Lane i of the result takes element i of a's low 16 and of b's low 16, as
// the even and odd halves of pair i.
LLMSERVE_DPBF16 inline __m512bh Interleave(__m256i a, __m256i b) {
  // Word 2i from a's word i, word 2i + 1 from b's word i (b's words are 32..63).
  alignas(64) static constexpr uint16_t kIndex[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                      8,  40, 9,  41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i index = _mm512_load_si512(kIndex);
  return reinterpret_cast<__m512bh>(
      _mm512_permutex2var_epi16(_mm512_castsi256_si512(a), index, _mm512_castsi256_si512(b)));
}

// Up to 16 cache elements at element `off` as bf16 (an fp32 cache rounded to
// nearest even); lanes outside `mask` are 0 and not read.
template <bool BF16>
LLMSERVE_DPBF16 inline __m256i LoadBf16(const void* cache, size_t off, __mmask16 mask) {
  if constexpr (BF16) {
    return _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(cache) + off);
  } else {
    const __m512 f = _mm512_maskz_loadu_ps(mask, static_cast<const float*>(cache) + off);
    return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(f));
  }
}

// n floats to bf16 (nearest even), then zero to `padded` elements.
LLMSERVE_DPBF16 void ToBf16(const float* x, size_t n, size_t padded, uint16_t* out) {
  size_t i = 0;
  for (; i < n; i += 16) {
    const __mmask16 m = LowMask(n - i);
    const __m256i h = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, x + i)));
    _mm256_mask_storeu_epi16(out + i, m, h);
  }
  for (i = n; i < padded; ++i) out[i] = 0;
}

LLMSERVE_DPBF16 inline __m512bh BroadcastPair(const uint16_t* pair) {
  int32_t word;
  std::memcpy(&word, pair, 4);
  return reinterpret_cast<__m512bh>(_mm512_set1_epi32(word));
}

// Scores of RN rows (bf16 queries qb[r], HD elements) against the up to 16
// keys whose transposed vectors start at element `kbase`; prefetches 16 keys'
// worth of bytes from `ahead` (when not null) on the way.
template <int RN, size_t HD, bool BF16>
LLMSERVE_DPBF16 inline void DotRows(const uint16_t* const* qb, const void* k_cache, size_t kbase, size_t bs,
                                    __mmask16 mask, __m512* out, const char* ahead) {
  constexpr size_t kStep = (BF16 ? 2 : 4) * 32;  // bytes read per pair of dimensions
  // Local accumulators and query pointers: `out` is only written at the end,
  // so the compiler keeps the sums in registers.
  __m512 acc[RN];
  const uint16_t* q[RN];
  for (int r = 0; r < RN; ++r) acc[r] = _mm512_setzero_ps(), q[r] = qb[r];
  for (size_t d = 0; d < HD; d += 2) {
    const __m512bh k =
        Interleave(LoadBf16<BF16>(k_cache, kbase + d * bs, mask), LoadBf16<BF16>(k_cache, kbase + (d + 1) * bs, mask));
    for (int r = 0; r < RN; ++r) acc[r] = _mm512_dpbf16_ps(acc[r], BroadcastPair(q[r] + d), k);
    if (ahead != nullptr) PrefetchLines(ahead + d / 2 * kStep, kStep);
  }
  for (int r = 0; r < RN; ++r) out[r] = acc[r];
}

template <int RN, size_t HD, bool BF16>
LLMSERVE_DPBF16 void ScoreChunk(const RowInfo* rows, const uint16_t* const* qb, const void* k_cache, size_t kbase,
                                size_t bs, __mmask16 mask, size_t j0, __m512 scale, const char* ahead) {
  __m512 acc[RN];
  DotRows<RN, HD, BF16>(qb, k_cache, kbase, bs, mask, acc, ahead);
  StoreScores<RN>(rows, acc, j0, mask, scale);
}

template <size_t HD, bool BF16>
LLMSERVE_DPBF16 void ScoreRows(const RowInfo* rows, const uint16_t* const* qb, size_t nrows, const void* k_cache,
                               size_t kbase, size_t bs, __mmask16 mask, size_t j0, __m512 scale, const char* ahead) {
  // Only the first chunk of rows reads ahead.
  size_t r = 0;
  for (; r + 8 <= nrows; r += 8, ahead = nullptr) {
    ScoreChunk<8, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead);
  }
  switch (nrows - r) {
    case 7: ScoreChunk<7, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    case 6: ScoreChunk<6, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    case 5: ScoreChunk<5, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    case 4: ScoreChunk<4, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    case 3: ScoreChunk<3, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    case 2: ScoreChunk<2, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    case 1: ScoreChunk<1, HD, BF16>(rows + r, qb + r, k_cache, kbase, bs, mask, j0, scale, ahead); break;
    default: break;
  }
}

// Position j of a context walked in order: its value row's element offset.
struct ValueCursor {
  const PagedAttentionShape& s;
  const AttentionTile& t;
  size_t block, slot;
  size_t Offset() const { return ValueOffset(s, static_cast<size_t>(t.table[block]), t.kv_head, slot); }
  void Next() {
    if (++slot == s.block_size) slot = 0, ++block;
  }
};

template <int NV, bool BF16>  // NV = head_dim / 16
LLMSERVE_DPBF16 void AttendTile(const AttentionTile& t, const PagedAttentionShape& s, size_t group, const void* k_cache,
                                const void* v_cache, float* scores) {
  constexpr size_t hd = 16 * NV;
  constexpr size_t kEs = BF16 ? 2 : 4;  // cache element bytes
  const size_t bs = s.block_size;
  const __m512 scale = _mm512_set1_ps(s.scale);
  RowInfo rows[kMaxTileRows];
  size_t kfirst, klast;
  const size_t nrows = TileRows(t, group, hd, scores, rows, &kfirst, &klast);
  // bf16 queries, then (reusing the room) bf16 softmax numerators with a
  // zero after each row's last, so every pair word is whole.
  const size_t stride = std::max(hd, klast - kfirst + 2);
  thread_local std::vector<uint16_t> bf16;
  if (bf16.size() < nrows * stride) bf16.resize(nrows * stride);
  const uint16_t* qb[kMaxTileRows];
  for (size_t r = 0; r < nrows; ++r) {
    ToBf16(rows[r].q, hd, hd, bf16.data() + r * stride);
    qb[r] = bf16.data() + r * stride;
  }
  for (size_t b = kfirst / bs; b <= klast / bs; ++b) {
    for (size_t slot0 = 0; slot0 < bs; slot0 += 16) {
      const size_t j0 = b * bs + slot0;
      if (j0 > klast) break;
      if (j0 + 16 <= kfirst) continue;
      const __mmask16 mask = LowMask(std::min<size_t>(16, bs - slot0));
      const size_t kbase = KeyOffset(s, static_cast<size_t>(t.table[b]), t.kv_head, slot0);
      const char* ahead = KeyReadAhead<kEs>(s, t, b, kfirst, klast, k_cache, v_cache) + slot0 * hd * kEs;
      ScoreRows<hd, BF16>(rows, qb, nrows, k_cache, kbase, bs, mask, j0, scale, ahead);
    }
  }
  float inv_sum[kMaxTileRows];
  SoftmaxNumerators(rows, nrows, inv_sum);
  for (size_t r = 0; r < nrows; ++r) {
    const size_t ctx = rows[r].last - rows[r].first + 1;
    ToBf16(rows[r].scores, ctx, ctx + 1, bf16.data() + r * stride);
  }
  // p·V per token, two heads of the group at a time sharing each value pair.
  const __m256i zero = _mm256_setzero_si256();
  for (size_t i = 0; i < t.tokens; ++i) {
    const size_t first = t.first[i], last = t.last[i];
    for (size_t g0 = 0; g0 < group; g0 += 2) {
      const bool two = g0 + 1 < group;
      const uint16_t* p0 = bf16.data() + (i * group + g0) * stride;
      const uint16_t* p1 = two ? p0 + stride : p0;
      __m512 acc0[NV], acc1[NV];
      for (int v = 0; v < NV; ++v) acc0[v] = acc1[v] = _mm512_setzero_ps();
      ValueCursor cur{s, t, first / bs, first % bs};
      for (size_t j = first; j <= last; j += 2) {
        if (cur.block < last / bs) PrefetchLines(ValueRowAhead<kEs>(s, t, cur.block, cur.slot, v_cache), 2 * hd * kEs);
        const size_t even_off = cur.Offset();
        cur.Next();
        const bool has_odd = j + 1 <= last;
        const size_t odd_off = has_odd ? cur.Offset() : 0;
        cur.Next();
        const __m512bh w0 = BroadcastPair(p0 + (j - first));
        const __m512bh w1 = BroadcastPair(p1 + (j - first));
        for (int v = 0; v < NV; ++v) {
          const __m256i a = LoadBf16<BF16>(v_cache, even_off + 16 * v, 0xffff);
          const __m256i b = has_odd ? LoadBf16<BF16>(v_cache, odd_off + 16 * v, 0xffff) : zero;
          const __m512bh pair = Interleave(a, b);
          acc0[v] = _mm512_dpbf16_ps(acc0[v], w0, pair);
          if (two) acc1[v] = _mm512_dpbf16_ps(acc1[v], w1, pair);
        }
      }
      const __m512 inv0 = _mm512_set1_ps(inv_sum[i * group + g0]);
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(t.out[i] + g0 * hd + 16 * v, _mm512_mul_ps(acc0[v], inv0));
      if (two) {
        const __m512 inv1 = _mm512_set1_ps(inv_sum[i * group + g0 + 1]);
        for (int v = 0; v < NV; ++v) _mm512_storeu_ps(t.out[i] + (g0 + 1) * hd + 16 * v, _mm512_mul_ps(acc1[v], inv1));
      }
    }
  }
}

template <bool BF16>
bool Dispatch(const AttentionTile& tile, const PagedAttentionShape& s, size_t group, const void* k_cache,
              const void* v_cache, float* scores) {
  switch (s.head_dim) {
    case 16: AttendTile<1, BF16>(tile, s, group, k_cache, v_cache, scores); return true;
    case 32: AttendTile<2, BF16>(tile, s, group, k_cache, v_cache, scores); return true;
    case 64: AttendTile<4, BF16>(tile, s, group, k_cache, v_cache, scores); return true;
    case 128: AttendTile<8, BF16>(tile, s, group, k_cache, v_cache, scores); return true;
    case 256: AttendTile<16, BF16>(tile, s, group, k_cache, v_cache, scores); return true;
    default: return false;
  }
}

}  // namespace

bool Dpbf16AttentionUsable(const PagedAttentionShape& s) {
  return s.bf16_products && !IsFp8(s.kv_dtype) &&
         static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx512Bf16) &&
         s.num_q_heads <= 16 * s.num_kv_heads;
}

bool AttendTileDpbf16(const AttentionTile& tile, const PagedAttentionShape& s, size_t group, const void* k_cache,
                      const void* v_cache, float* scores) {
  return s.kv_dtype == KvDType::kBF16 ? Dispatch<true>(tile, s, group, k_cache, v_cache, scores)
                                      : Dispatch<false>(tile, s, group, k_cache, v_cache, scores);
}

}  // namespace llmserve::kernels::cpu::internal
