#include "kernels/cpu/activation.h"

#include <cmath>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/exp_avx512.h"

namespace llmserve::kernels::cpu {
namespace {

// One row with AVX-512: every element (the masked tail too) goes through the
// same vector code, so a value's result does not depend on where it sits.
__attribute__((target("avx512f"))) void SiluMulRowAvx512(const float* g, const float* u, size_t ff,
                                                         float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (size_t i = 0; i < ff; i += 16) {
    const size_t left = ff - i;
    const __mmask16 mask = left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 gv = _mm512_maskz_loadu_ps(mask, g + i);
    const __m512 uv = _mm512_maskz_loadu_ps(mask, u + i);
    const __m512 e = ExpAvx512(_mm512_sub_ps(_mm512_setzero_ps(), gv));
    const __m512 s = _mm512_div_ps(gv, _mm512_add_ps(one, e));
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(s, uv));
  }
}

void SiluMulRowScalar(const float* g, const float* u, size_t ff, float* out) {
  for (size_t i = 0; i < ff; ++i) out[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

}  // namespace

void SiluMulReference(const float* gate_up, size_t rows, size_t ff, float* out) {
  for (size_t r = 0; r < rows; ++r) SiluMulRowScalar(gate_up + r * 2 * ff, gate_up + r * 2 * ff + ff, ff, out + r * ff);
}

void SiluMul(const float* gate_up, size_t rows, size_t ff, float* out, ThreadPool& pool) {
  // Element-wise: any split of the rows gives the same bits.
  const bool avx512 = static_cast<int>(ActiveIsa()) >= static_cast<int>(Isa::kAvx512);
  const size_t grain = ff >= 1024 ? 4 : 64;
  pool.ParallelFor(rows, grain, [&](size_t begin, size_t end, size_t) {
    for (size_t r = begin; r < end; ++r) {
      const float* g = gate_up + r * 2 * ff;
      if (avx512) {
        SiluMulRowAvx512(g, g + ff, ff, out + r * ff);
      } else {
        SiluMulRowScalar(g, g + ff, ff, out + r * ff);
      }
    }
  });
}

}  // namespace llmserve::kernels::cpu
