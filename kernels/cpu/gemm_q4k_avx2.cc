// AVX2 kernel for Q4_K and Q5_K weights (gemm_q4k.h). Only reached after run-time
// dispatch; every function here carries the target attribute. One ymm lane
// per output row of a group; the integer sums of a block are exact in any
// order, so every lane combines them in floats in the scalar kernel's order.
// Up to kTile activation rows share each unpacked weight vector.
#include "kernels/cpu/gemm_q4k.h"
#include "kernels/cpu/gemm_q4k_min_sums.h"
#include "kernels/cpu/group_rows_avx2.h"

namespace llmserve::kernels::cpu::q4k {
namespace {

static_assert(kGroupRows == 8, "one ymm lane per output row of a group");

constexpr size_t kTile = 2;

// Lane-wise view of activation row r of a tile.
struct TileRows {
  const int8_t* xq[kTile];
  const int16_t* xs[kTile];
  float xd[kTile];
};

// The fifth bits of sub-block s as 16 in each byte (bit s of each qh byte).
LLMSERVE_AVX2_INLINE __m256i FifthBits(__m256i qh, int s) {
  const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(s)), _mm256_set1_epi8(1));
  return _mm256_slli_epi16(bit, 4);
}

// 8 int32 lanes whose sum is Σ_s sc_s · Σ_{c in s} qw·qx for weight row j of
// the group block `gb`, for each activation row of the tile. vpmaddubsw's
// unsigned × signed pairs: quants ≤ 31, |qx| ≤ 128, so a pair sum ≤ 7936.
template <Format F, size_t R>
LLMSERVE_AVX2_INLINE void RowSums(const uint8_t* gb, size_t j, const TileRows& t, __m256i out[R]) {
  constexpr Layout kL = LayoutOf(F);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m128i sc8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kL.scales_at + j * kSubBlocks));
  const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sc8));  // [sc_0..sc_7] in each half
  __m256i qh = _mm256_setzero_si256();
  if constexpr (F == Format::kQ5_K) qh = _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kL.qh_at + j * 32));
  for (size_t r = 0; r < R; ++r) out[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (size_t c = 0; c < 4; ++c) {
    const __m256i w =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(gb + kL.quants_at + j * kBlock / 2 + 32 * c));
    __m256i lo = _mm256_and_si256(w, low), hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), low);
    if constexpr (F == Format::kQ5_K) {
      lo = _mm256_or_si256(lo, FifthBits(qh, static_cast<int>(2 * c)));
      hi = _mm256_or_si256(hi, FifthBits(qh, static_cast<int>(2 * c + 1)));
    }
    const __m256i sc_lo = _mm256_shuffle_epi8(sc, _mm256_set1_epi16(static_cast<short>((4 * c + 1) << 8 | 4 * c)));
    const __m256i sc_hi =
        _mm256_shuffle_epi8(sc, _mm256_set1_epi16(static_cast<short>((4 * c + 3) << 8 | (4 * c + 2))));
    for (size_t r = 0; r < R; ++r) {
      const __m256i x_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.xq[r] + 64 * c));
      const __m256i x_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.xq[r] + 64 * c + 32));
      const __m256i p_lo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, x_lo), sc_lo);
      const __m256i p_hi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, x_hi), sc_hi);
      out[r] = _mm256_add_epi32(out[r], _mm256_add_epi32(p_lo, p_hi));
    }
  }
}

// Lane j = isum of weight row j, for each activation row of the tile.
template <Format F, size_t R>
LLMSERVE_AVX2_INLINE void IntSums(const uint8_t* gb, const TileRows& t, __m256i isum[R]) {
  __m256i pairs[4][R];
#pragma GCC unroll 4
  for (size_t jp = 0; jp < 4; ++jp) {
    __m256i a[R], b[R];
    RowSums<F, R>(gb, 2 * jp, t, a);
    RowSums<F, R>(gb, 2 * jp + 1, t, b);
    for (size_t r = 0; r < R; ++r) pairs[jp][r] = _mm256_hadd_epi32(a[r], b[r]);
  }
  for (size_t r = 0; r < R; ++r) {
    const __m256i q0123 = _mm256_hadd_epi32(pairs[0][r], pairs[1][r]);
    const __m256i q4567 = _mm256_hadd_epi32(pairs[2][r], pairs[3][r]);
    isum[r] = _mm256_add_epi32(_mm256_permute2x128_si256(q0123, q4567, 0x20),
                               _mm256_permute2x128_si256(q0123, q4567, 0x31));
  }
}

// Activation rows [i, i + R) against group g.
template <Format F, size_t R>
LLMSERVE_AVX2 void Tile(const Problem& p, size_t g, size_t i) {
  constexpr Layout kL = LayoutOf(F);
  const size_t blocks = p.k / kBlock;
  __m256 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* gb = p.w + (g * blocks + b) * kL.group_block_bytes;
    PrefetchGroupBlockAhead(gb, kL.group_block_bytes);
    TileRows t;
    for (size_t r = 0; r < R; ++r) {
      t.xq[r] = p.xq + (i + r) * p.k + b * kBlock;
      t.xs[r] = p.xsum + ((i + r) * blocks + b) * kSums;
      t.xd[r] = p.xd[(i + r) * blocks + b];
    }
    __m256i isum[R];
    IntSums<F, R>(gb, t, isum);
    const __m256 dw = _mm256_load_ps(reinterpret_cast<const float*>(gb + kL.d_at));
    const __m256 dmin = _mm256_load_ps(reinterpret_cast<const float*>(gb + kL.dmin_at));
    for (size_t r = 0; r < R; ++r) {
      const __m256 dx = _mm256_set1_ps(t.xd[r]);
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r]), _mm256_mul_ps(dw, dx), acc[r]);
      acc[r] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(MinSums<F>(gb, t.xs[r])), _mm256_mul_ps(dmin, dx), acc[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) StoreGroupLanes(p.y + (i + r) * p.ldy + g * kGroupRows, p.n - g * kGroupRows, acc[r]);
}

template <Format F>
LLMSERVE_AVX2 void Groups(const Problem& p, size_t group_begin, size_t group_end) {
  for (size_t g = group_begin; g < group_end; ++g) {
    size_t i = 0;
    for (; i + kTile <= p.m; i += kTile) Tile<F, kTile>(p, g, i);
    for (; i < p.m; ++i) Tile<F, 1>(p, g, i);
  }
}

// The largest of the 8 lanes.
LLMSERVE_AVX2_INLINE float MaxLane(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
}

// min(127, round_half_even(scale × p[i])) for 8 lanes, as int32.
LLMSERVE_AVX2_INLINE __m256i Quantize8(const float* p, __m256 scale) {
  const __m256 v = _mm256_round_ps(_mm256_mul_ps(scale, _mm256_loadu_ps(p)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm256_cvtps_epi32(_mm256_min_ps(v, _mm256_set1_ps(127.f)));
}

}  // namespace

// QuantizeRow's steps on 8 lanes: the same products, roundings (half to even)
// and clamp, so the same bits. NaN inputs are ignored by the maximum as there.
LLMSERVE_AVX2 void QuantizeRowAvx2(const float* x, size_t cols, int8_t* q, float* d, int16_t* sums) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (size_t b = 0; b < cols / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    __m256 amax8 = _mm256_setzero_ps();
    for (size_t i = 0; i < kBlock; i += 8) amax8 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(xb + i), abs_mask), amax8);
    const float amax = MaxLane(amax8);
    float max = 0.f;  // the first element of largest |x|
    for (size_t i = 0; amax != 0.f && i < kBlock; i += 8) {
      const __m256 a = _mm256_and_ps(_mm256_loadu_ps(xb + i), abs_mask);
      const int hits = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax), _CMP_EQ_OQ));
      if (hits != 0) {
        max = xb[i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(hits)))];
        break;
      }
    }
    const float iscale = amax != 0.f ? -127.f / max : 0.f;
    d[b] = amax != 0.f ? 1.f / iscale : 0.f;
    const __m256 scale = _mm256_set1_ps(iscale);
    for (size_t i = 0; i < kBlock; i += 32) {
      const __m256i ab = _mm256_packs_epi32(Quantize8(xb + i, scale), Quantize8(xb + i + 8, scale));
      const __m256i ce = _mm256_packs_epi32(Quantize8(xb + i + 16, scale), Quantize8(xb + i + 24, scale));
      // packs work within 128-bit lanes: put the 4-byte runs back in order
      const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, ce), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * kBlock + i), bytes);
    }
  }
  SumsOf16(q, cols, sums);
}

LLMSERVE_AVX2 void GemmAvx2(const Problem& p, size_t group_begin, size_t group_end) {
  if (p.format == Format::kQ5_K) return Groups<Format::kQ5_K>(p, group_begin, group_end);
  Groups<Format::kQ4_K>(p, group_begin, group_end);
}

}  // namespace llmserve::kernels::cpu::q4k
