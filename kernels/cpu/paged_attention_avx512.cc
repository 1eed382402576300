// AVX-512 attention for one tile (up to kMaxTileTokens query tokens of one
// request × their GQA group of heads, against one KV head).
//
// Scores: keys are stored transposed per block, so for 16 consecutive keys
// and one dimension d the cache holds one vector; a query row's 16 scores are
// acc = q[0] * K[0][..]; acc = fma(q[d], K[d][..], acc) for d = 1..hd-1 — no
// horizontal sums, and each key vector is loaded once for every row of the
// tile (up to 8 rows per pass).
//
// Numerics: every reduction (q·k over head_dim in d order, the softmax max
// and sum in 16 lanes starting at the row's first position, p·V over
// positions in order) depends only on the row's query, its context and
// head_dim — never on which other rows share the tile, how the prompt was
// chunked or which thread ran it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/paged_attention_avx512_parts.h"

namespace llmserve::kernels::cpu::internal {

bool HaveAvx512() {
  static const bool have = __builtin_cpu_supports("avx512f");
  return have;
}

namespace {

// 16 fp8 codes (in the low bytes of 16-bit lanes) as floats: E5M2 is the
// top byte of an IEEE half; E4M3 moved into a half's fields is its value /
// 256, for every finite code. `scale` (times 256 for E4M3) then multiplies
// exactly once, as the table path (kv_fp8.h) does.
template <KvDType kDt>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 WidenFp8(__m256i codes, __m512 scale) {
  __m256i half;
  if constexpr (kDt == KvDType::kFp8E5M2) {
    half = _mm256_slli_epi16(codes, 8);
  } else {
    const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(codes, _mm256_set1_epi16(0x80)), 8);
    half = _mm256_or_si256(sign, _mm256_slli_epi16(_mm256_and_si256(codes, _mm256_set1_epi16(0x7f)), 7));
  }
  return _mm512_mul_ps(_mm512_cvtph_ps(half), scale);
}

// What WidenFp8 multiplies by for a cache scale.
template <KvDType kDt>
inline float Fp8Multiplier(float scale) {
  return kDt == KvDType::kFp8E4M3 ? 256.f * scale : scale;
}

// Up to 16 cache elements at element `off` as floats (bf16 widened by a
// shift, fp8 by WidenFp8 with `fp8_scale` from Fp8Multiplier); lanes outside
// `mask` are 0 and not read.
template <KvDType kDt>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 LoadCache(const void* cache, size_t off,
                                                                             __mmask16 mask, __m512 fp8_scale) {
  if constexpr (kDt == KvDType::kBF16) {
    const __m256i h = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(cache) + off);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else if constexpr (kDt == KvDType::kF32) {
    return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(cache) + off);
  } else {
    const __m128i b = _mm_maskz_loadu_epi8(mask, static_cast<const uint8_t*>(cache) + off);
    return WidenFp8<kDt>(_mm256_cvtepu8_epi16(b), fp8_scale);
  }
}

template <KvDType kDt>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512 LoadFull(const void* cache, size_t off,
                                                                            __m512 fp8_scale) {
  if constexpr (kDt == KvDType::kBF16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(cache) + off));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else if constexpr (kDt == KvDType::kF32) {
    return _mm512_loadu_ps(static_cast<const float*>(cache) + off);
  } else {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint8_t*>(cache) + off));
    return WidenFp8<kDt>(_mm256_cvtepu8_epi16(b), fp8_scale);
  }
}

// Scores of RN query rows against the (up to 16) keys whose transposed
// vectors start at element `kbase` (dimension d at kbase + d * bs);
// prefetches 16 keys' worth of bytes from `ahead` (when not null) on the way.
template <int RN, size_t HD, KvDType kDt>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline void ScoreRows(const float* const* q, const void* k_cache,
                                                                 size_t kbase, size_t bs, __mmask16 mask,
                                                                 __m512 fp8_scale, __m512* out, const char* ahead) {
  constexpr size_t kStep = KvElementSize(kDt) * 16;  // bytes read per dimension
  // Local accumulators and query pointers (kept in registers: `out` and the
  // queries could alias as far as the compiler knows).
  __m512 acc[RN];
  const float* qr[RN];
  for (int r = 0; r < RN; ++r) qr[r] = q[r];
  {
    const __m512 k = LoadCache<kDt>(k_cache, kbase, mask, fp8_scale);
    for (int r = 0; r < RN; ++r) acc[r] = _mm512_mul_ps(_mm512_set1_ps(qr[r][0]), k);
  }
  const size_t ldk = bs;
  for (size_t d = 1; d < HD; ++d) {
    const __m512 k = LoadCache<kDt>(k_cache, kbase + d * ldk, mask, fp8_scale);
    for (int r = 0; r < RN; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(qr[r][d]), k, acc[r]);
    if (ahead != nullptr) PrefetchLines(ahead + d * kStep, kStep);
  }
  for (int r = 0; r < RN; ++r) out[r] = acc[r];
}

template <int RN, size_t HD, KvDType kDt>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void ScoreChunk(const RowInfo* rows, const void* k_cache, size_t kbase,
                                                           size_t bs, __mmask16 mask, size_t j0, __m512 scale,
                                                           __m512 fp8_scale, const char* ahead) {
  const float* q[RN];
  for (int r = 0; r < RN; ++r) q[r] = rows[r].q;
  __m512 acc[RN];
  ScoreRows<RN, HD, kDt>(q, k_cache, kbase, bs, mask, fp8_scale, acc, ahead);
  StoreScores<RN>(rows, acc, j0, mask, scale);
}

template <int NV, KvDType kDt>  // NV = head_dim / 16
__attribute__((target("avx512f,avx512bw,avx512vl"))) void AttendTile(const AttentionTile& t, const PagedAttentionShape& s,
                                                           size_t group, const void* k_cache, const void* v_cache,
                                                           float* scores) {
  constexpr size_t hd = 16 * NV;
  constexpr size_t kEs = KvElementSize(kDt);  // cache element bytes
  const size_t bs = s.block_size;
  const __m512 scale = _mm512_set1_ps(s.scale);
  const __m512 k_fp8 = _mm512_set1_ps(Fp8Multiplier<kDt>(s.k_scale));
  const __m512 v_fp8 = _mm512_set1_ps(Fp8Multiplier<kDt>(s.v_scale));
  RowInfo rows[kMaxTileRows];
  size_t kfirst, klast;
  const size_t nrows = TileRows(t, group, hd, scores, rows, &kfirst, &klast);
  // Scores, 16 keys (or the rest of a block) at a time, for all rows.
  for (size_t b = kfirst / bs; b <= klast / bs; ++b) {
    for (size_t slot0 = 0; slot0 < bs; slot0 += 16) {
      const size_t j0 = b * bs + slot0;
      if (j0 > klast) break;
      if (j0 + 16 <= kfirst) continue;
      const __mmask16 mask = LowMask(std::min<size_t>(16, bs - slot0));
      const size_t kbase = KeyOffset(s, static_cast<size_t>(t.table[b]), t.kv_head, slot0);
      // Only the first chunk of rows reads ahead.
      const char* ahead = KeyReadAhead<kEs>(s, t, b, kfirst, klast, k_cache, v_cache) + slot0 * hd * kEs;
      size_t r = 0;
      for (; r + 8 <= nrows; r += 8, ahead = nullptr) {
        ScoreChunk<8, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead);
      }
      switch (nrows - r) {
        case 7: ScoreChunk<7, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        case 6: ScoreChunk<6, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        case 5: ScoreChunk<5, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        case 4: ScoreChunk<4, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        case 3: ScoreChunk<3, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        case 2: ScoreChunk<2, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        case 1: ScoreChunk<1, hd, kDt>(rows + r, k_cache, kbase, bs, mask, j0, scale, k_fp8, ahead); break;
        default: break;
      }
    }
  }
  // Softmax numerators in place; 1 / sum per row.
  float inv_sum[kMaxTileRows];
  SoftmaxNumerators(rows, nrows, inv_sum);
  // p·V per token: each value row loaded once for two heads of the group.
  for (size_t i = 0; i < t.tokens; ++i) {
    const size_t first = t.first[i], last = t.last[i];
    for (size_t g0 = 0; g0 < group; g0 += 2) {
      const size_t gn = std::min<size_t>(2, group - g0);
      const float* p0 = rows[i * group + g0].scores;
      const float* p1 = gn > 1 ? rows[i * group + g0 + 1].scores : p0;
      __m512 acc0[NV], acc1[NV];
      for (int v = 0; v < NV; ++v) acc0[v] = acc1[v] = _mm512_setzero_ps();
      // Positions in order, a cache block at a time (value rows of a block
      // are hd apart).
      for (size_t j = first; j <= last;) {
        const size_t b = j / bs, end = std::min(last + 1, (b + 1) * bs);
        size_t val = ValueOffset(s, static_cast<size_t>(t.table[b]), t.kv_head, j % bs);
        const bool read_ahead = b < last / bs;
        if (gn > 1) {
          for (; j < end; ++j, val += hd) {
            if (read_ahead) PrefetchLines(ValueRowAhead<kEs>(s, t, b, j % bs, v_cache), hd * kEs);
            const __m512 w0 = _mm512_set1_ps(p0[j - first]);
            const __m512 w1 = _mm512_set1_ps(p1[j - first]);
            for (int v = 0; v < NV; ++v) {
              const __m512 vv = LoadFull<kDt>(v_cache, val + 16 * v, v_fp8);
              acc0[v] = _mm512_fmadd_ps(w0, vv, acc0[v]);
              acc1[v] = _mm512_fmadd_ps(w1, vv, acc1[v]);
            }
          }
        } else {
          for (; j < end; ++j, val += hd) {
            if (read_ahead) PrefetchLines(ValueRowAhead<kEs>(s, t, b, j % bs, v_cache), hd * kEs);
            const __m512 w0 = _mm512_set1_ps(p0[j - first]);
            for (int v = 0; v < NV; ++v) {
              acc0[v] = _mm512_fmadd_ps(w0, LoadFull<kDt>(v_cache, val + 16 * v, v_fp8), acc0[v]);
            }
          }
        }
      }
      const __m512 inv0 = _mm512_set1_ps(inv_sum[i * group + g0]);
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(t.out[i] + g0 * hd + 16 * v, _mm512_mul_ps(acc0[v], inv0));
      if (gn > 1) {
        const __m512 inv1 = _mm512_set1_ps(inv_sum[i * group + g0 + 1]);
        for (int v = 0; v < NV; ++v) _mm512_storeu_ps(t.out[i] + (g0 + 1) * hd + 16 * v, _mm512_mul_ps(acc1[v], inv1));
      }
    }
  }
}

template <KvDType kDt>
bool Dispatch(const AttentionTile& tile, const PagedAttentionShape& s, size_t group, const void* k_cache,
              const void* v_cache, float* scores) {
  switch (s.head_dim) {
    case 16: AttendTile<1, kDt>(tile, s, group, k_cache, v_cache, scores); return true;
    case 32: AttendTile<2, kDt>(tile, s, group, k_cache, v_cache, scores); return true;
    case 64: AttendTile<4, kDt>(tile, s, group, k_cache, v_cache, scores); return true;
    case 128: AttendTile<8, kDt>(tile, s, group, k_cache, v_cache, scores); return true;
    case 256: AttendTile<16, kDt>(tile, s, group, k_cache, v_cache, scores); return true;
    default: return false;
  }
}

}  // namespace

bool AttendTileAvx512(const AttentionTile& tile, const PagedAttentionShape& s, size_t group, const void* k_cache,
                      const void* v_cache, float* scores) {
  static const bool have_bw = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  if (!HaveAvx512() || !have_bw || group > 16) return false;
  switch (s.kv_dtype) {
    case KvDType::kF32: return Dispatch<KvDType::kF32>(tile, s, group, k_cache, v_cache, scores);
    case KvDType::kBF16: return Dispatch<KvDType::kBF16>(tile, s, group, k_cache, v_cache, scores);
    case KvDType::kFp8E4M3: return Dispatch<KvDType::kFp8E4M3>(tile, s, group, k_cache, v_cache, scores);
    case KvDType::kFp8E5M2: return Dispatch<KvDType::kFp8E5M2>(tile, s, group, k_cache, v_cache, scores);
  }
  return false;
}

}  // namespace llmserve::kernels::cpu::internal
