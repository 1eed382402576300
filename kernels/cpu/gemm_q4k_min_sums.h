#pragma once
// The min term of the Q4_K / Q5_K kernels (gemm_q4k.h) for a group block,
// which the AVX2 and AVX-512 kernels compute alike on ymm registers.
#include "kernels/cpu/gemm_q4k.h"
#include "kernels/cpu/group_rows_avx2.h"

namespace llmserve::kernels::cpu::q4k {

// Lane j = msum of weight row j: Σ_p (m_2p, m_2p+1) · (sum32_2p, sum32_2p+1).
template <Format F>
LLMSERVE_AVX2_INLINE __m256i MinSums(const uint8_t* gb, const int16_t* xs) {
  constexpr size_t kMinsAt = LayoutOf(F).mins_at;
  alignas(4) int16_t s32[kSubBlocks];
  for (size_t s = 0; s < kSubBlocks; ++s) s32[s] = static_cast<int16_t>(xs[2 * s] + xs[2 * s + 1]);
  __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 4
  for (size_t p = 0; p < 4; ++p) {
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(gb + kMinsAt + 16 * p)));
    int32_t pair;
    __builtin_memcpy(&pair, s32 + 2 * p, sizeof(pair));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(mins, _mm256_set1_epi32(pair)));
  }
  return acc;
}

}  // namespace llmserve::kernels::cpu::q4k
