// AVX2 kernel for Q8_0 weights (gemm_q8.h). Only reached after run-time
// dispatch; every function here carries the target attribute. One ymm lane
// per output row of a group: each block's 8 integer dot products are summed
// exactly, so every lane accumulates in the scalar kernel's order.
#include "kernels/cpu/gemm_q8.h"
#include "kernels/cpu/group_rows_avx2.h"

namespace llmserve::kernels::cpu::q8 {
namespace {

static_assert(kGroupRows == 8, "one ymm lane per output row of a group");

// The 8 int32 partial sums of 32 products w·x, as vpmaddubsw's unsigned ×
// signed pairs (pair sums ≤ 2 × 128 × 127 never saturate):
//  - |x| × (w · sign x): one sign per row, since |x| serves the whole group;
//    exact while no w is -128 (whose negation wraps), the usual case;
//  - with kMinQuant, |w| × (x · sign w): |w| is read unsigned, so -128
//    counts as 128, and x is within ±127.
template <bool kMinQuant>
LLMSERVE_AVX2_INLINE __m256i Dot32(__m256i w, __m256i x, __m256i abs_x, __m256i ones) {
  if constexpr (kMinQuant) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)), ones);
  } else {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(abs_x, _mm256_sign_epi8(w, x)), ones);
  }
}

template <bool kMinQuant>
LLMSERVE_AVX2 void Group(const Problem& p, size_t g, const uint8_t* wq, const float* wd) {
  const size_t blocks = p.k / kBlock;
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t i = 0; i < p.m; ++i) {
    const int8_t* xq = p.xq + i * p.k;
    const float* xd = p.xd + i * blocks;
    __m256 acc = _mm256_setzero_ps();
    for (size_t b = 0; b < blocks; ++b) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * kBlock));
      const __m256i abs_x = _mm256_sign_epi8(x, x);
      const uint8_t* w = wq + b * kGroupRows * kBlock;
      __m256i dots[kGroupRows];
      for (size_t j = 0; j < kGroupRows; ++j)
        dots[j] = Dot32<kMinQuant>(_mm256_load_si256(reinterpret_cast<const __m256i*>(w + j * kBlock)), x, abs_x,
                                   ones);
      const __m256 sums = _mm256_cvtepi32_ps(SumLanes(dots));
      const __m256 scale = _mm256_mul_ps(_mm256_load_ps(wd + b * kGroupRows), _mm256_set1_ps(xd[b]));
      acc = _mm256_fmadd_ps(sums, scale, acc);
    }
    float* y = p.y + i * p.ldy + g * kGroupRows;
    StoreGroupLanes(y, p.n - g * kGroupRows, acc);
  }
}

}  // namespace

LLMSERVE_AVX2 void GemmAvx2(const Problem& p, size_t group_begin, size_t group_end) {
  const size_t blocks = p.k / kBlock;
  const size_t groups = (p.n + kGroupRows - 1) / kGroupRows;
  const auto* scales = reinterpret_cast<const float*>(p.w + groups * blocks * kGroupRows * kBlock);
  for (size_t g = group_begin; g < group_end; ++g) {
    const uint8_t* wq = p.w + g * blocks * kGroupRows * kBlock;
    const float* wd = scales + g * blocks * kGroupRows;
    if (p.has_min_quant) Group<true>(p, g, wq, wd);
    else Group<false>(p, g, wq, wd);
  }
}

}  // namespace llmserve::kernels::cpu::q8
