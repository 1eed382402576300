// AVX2 kernel for Q6_K weights (gemm_q6k.h). Only reached after run-time
// dispatch; every function here carries the target attribute. One ymm lane
// per output row of a group; the integer sums of a block are exact in any
// order, so every lane combines them in floats in the scalar kernel's order.
// Up to kTile activation rows share each unpacked weight vector.
#include "kernels/cpu/gemm_q6k.h"
#include "kernels/cpu/group_rows_avx2.h"

namespace llmserve::kernels::cpu::q6k {
namespace {

static_assert(kGroupRows == 8, "one ymm lane per output row of a group");

constexpr size_t kTile = 2;

// The activation rows of a tile in one block.
struct TileRows {
  const int8_t* xq[kTile];
  const int16_t* xs[kTile];
};

// Quants 32t..32t+31 of a half (0..63, unsigned bytes) from its ql and qh vectors.
LLMSERVE_AVX2_INLINE __m256i Quants(__m256i ql0, __m256i ql1, __m256i qh, int t) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i ql = t % 2 == 0 ? ql0 : ql1;
  const __m256i low = t < 2 ? _mm256_and_si256(ql, nibble) : _mm256_and_si256(_mm256_srli_epi16(ql, 4), nibble);
  const __m256i top = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * t)), _mm256_set1_epi8(3));
  return _mm256_or_si256(low, _mm256_slli_epi16(top, 4));
}

// 8 int32 lanes whose sum is isum of weight row j of the group block `gb`,
// for each activation row of the tile. vpmaddubsw's unsigned × signed pairs:
// quants ≤ 63, |qx| ≤ 128, so a pair sum ≤ 16128.
template <size_t R>
LLMSERVE_AVX2_INLINE void RowSums(const uint8_t* gb, size_t j, const TileRows& t, __m256i out[R]) {
  const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(gb + kScalesAt + 16 * j)));
  const uint8_t* ql = gb + kQlAt + j * kBlock / 2;
  const uint8_t* qh = gb + kQhAt + j * kBlock / 4;
  for (size_t r = 0; r < R; ++r) {
    // the −32 offset: Σ_s sc_s · 32 · sum16[s], exact
    const __m256i xs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.xs[r]));
    out[r] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, xs), 5));
  }
#pragma GCC unroll 2
  for (size_t half = 0; half < 2; ++half) {
    // this half's 8 scales in both 128-bit lanes
    const __m256i sc = half == 0 ? _mm256_permute2x128_si256(sc16, sc16, 0x00)
                                 : _mm256_permute2x128_si256(sc16, sc16, 0x11);
    const __m256i ql0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ql + 64 * half));
    const __m256i ql1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ql + 64 * half + 32));
    const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(qh + 32 * half));
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      const __m256i w = Quants(ql0, ql1, h, q);
      // sub-block 2q's scale in the low lane (bytes 0..15), 2q+1's in the high one
      const char a = static_cast<char>(4 * q), b = static_cast<char>(4 * q + 2);
      const __m256i scale = _mm256_shuffle_epi8(
          sc, _mm256_setr_epi8(a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1, a, a + 1,  //
                               b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1, b, b + 1));
      for (size_t r = 0; r < R; ++r) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(t.xq[r] + 128 * half + 32 * q));
        out[r] = _mm256_add_epi32(out[r], _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), scale));
      }
    }
  }
}

// Activation rows [i, i + R) against group g.
template <size_t R>
LLMSERVE_AVX2 void Tile(const Problem& p, size_t g, size_t i) {
  const size_t blocks = p.k / kBlock;
  __m256 acc[R];
  for (size_t r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (size_t b = 0; b < blocks; ++b) {
    const uint8_t* gb = p.w + (g * blocks + b) * kGroupBlockBytes;
    PrefetchGroupBlockAhead(gb, kGroupBlockBytes);
    TileRows t;
    for (size_t r = 0; r < R; ++r) {
      t.xq[r] = p.xq + (i + r) * p.k + b * kBlock;
      t.xs[r] = p.xsum + ((i + r) * blocks + b) * kSums;
    }
    __m256i rows[R][kGroupRows];
#pragma GCC unroll 8
    for (size_t j = 0; j < kGroupRows; ++j) {
      __m256i sums[R];
      RowSums<R>(gb, j, t, sums);
      for (size_t r = 0; r < R; ++r) rows[r][j] = sums[r];
    }
    const __m256 dw = _mm256_load_ps(reinterpret_cast<const float*>(gb + kDAt));
    for (size_t r = 0; r < R; ++r) {
      const __m256 dx = _mm256_set1_ps(p.xd[(i + r) * blocks + b]);
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(SumLanes(rows[r])), _mm256_mul_ps(dw, dx), acc[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) StoreGroupLanes(p.y + (i + r) * p.ldy + g * kGroupRows, p.n - g * kGroupRows, acc[r]);
}

}  // namespace

LLMSERVE_AVX2 void GemmAvx2(const Problem& p, size_t group_begin, size_t group_end) {
  for (size_t g = group_begin; g < group_end; ++g) {
    size_t i = 0;
    for (; i + kTile <= p.m; i += kTile) Tile<kTile>(p, g, i);
    for (; i < p.m; ++i) Tile<1>(p, g, i);
  }
}

}  // namespace llmserve::kernels::cpu::q6k
