#pragma once
// fp32 → bf16 rounding over 16 lanes with AVX-512F/BW, bit for bit as
// F32ToBf16 (linear.h): nearest even, NaN kept quiet, denormals kept. For
// kernels compiled with a per-function target attribute that includes
// avx512f and avx512bw (include only from such translation units; call only
// after run-time dispatch saw AVX-512).

// GCC 12 reports its own _mm512_undefined_* helpers as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace llmserve::kernels::cpu {

__attribute__((target("avx512f,avx512bw"))) inline __m256i RoundToBf16Avx512(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r16 = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r16 = _mm512_mask_mov_epi32(r16, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r16);
}

}  // namespace llmserve::kernels::cpu
