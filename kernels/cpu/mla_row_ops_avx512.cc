#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include "kernels/cpu/mla_row_ops.h"

namespace llmserve::kernels::cpu::internal {

namespace {

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

// The first n % 16 lanes of a mask.
LLMSERVE_AVX512 inline __mmask16 Tail(size_t n) { return static_cast<__mmask16>((1u << (n % 16)) - 1); }

// Σ a[i]·b[i]: 16 lanes of FMAs in index order, then the lanes summed by
// _mm512_reduce_add_ps's fixed tree.
LLMSERVE_AVX512 float Dot(const float* a, const float* b, size_t n) {
  __m512 acc = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= n; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
  if (i < n) {
    const __mmask16 m = Tail(n);
    acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

LLMSERVE_AVX512 void Axpy(float p, const float* x, float* y, size_t n) {
  const __m512 vp = _mm512_set1_ps(p);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(y + i, _mm512_fmadd_ps(vp, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
  }
  if (i < n) {
    const __mmask16 m = Tail(n);
    const __m512 sum = _mm512_fmadd_ps(vp, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i));
    _mm512_mask_storeu_ps(y + i, m, sum);
  }
}

LLMSERVE_AVX512 void WidenBf16(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(bits, 16)));
  }
  for (; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    __builtin_memcpy(dst + i, &bits, 4);
  }
}

#undef LLMSERVE_AVX512

}  // namespace

const MlaRowOps& MlaRowOpsAvx512() {
  static const MlaRowOps ops = {Dot, Axpy, WidenBf16};
  return ops;
}

}  // namespace llmserve::kernels::cpu::internal
