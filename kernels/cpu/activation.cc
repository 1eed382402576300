#include "kernels/cpu/activation.h"

#include <cmath>

#include <glog/logging.h>

#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/bf16_round_avx512.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/exp_avx512.h"
#include "kernels/cpu/gemm_amx.h"

namespace llmserve::kernels::cpu {
namespace {

// silu(g) * u over 16 lanes. Every element (a masked tail too) goes through
// this same vector code, so a value's result does not depend on where it sits.
__attribute__((target("avx512f"))) inline __m512 SiluMul16(const float* g, const float* u, __mmask16 mask) {
  const __m512 gv = _mm512_maskz_loadu_ps(mask, g);
  const __m512 uv = _mm512_maskz_loadu_ps(mask, u);
  const __m512 e = ExpAvx512(_mm512_sub_ps(_mm512_setzero_ps(), gv));
  return _mm512_mul_ps(_mm512_div_ps(gv, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), uv);
}

__attribute__((target("avx512f"))) void SiluMulRowAvx512(const float* g, const float* u, size_t ff,
                                                         float* out) {
  for (size_t i = 0; i < ff; i += 16) {
    const __mmask16 mask = LowMask(ff - i);
    _mm512_mask_storeu_ps(out + i, mask, SiluMul16(g + i, u + i, mask));
  }
}

// One row of SiluMulTiled (`dst`: amx::TiledARow); lanes past ff load as 0,
// so the padding columns come out 0.
__attribute__((target("avx512f,avx512bw"))) void SiluMulRowTiledAvx512(const float* g, const float* u, size_t ff,
                                                                       size_t kpad, uint16_t* dst) {
  for (size_t c = 0; c < kpad; c += 16) {
    const __m256i bf16 = RoundToBf16Avx512(SiluMul16(g + c, u + c, LowMask(c < ff ? ff - c : 0)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + amx::TiledAColumn(c)), bf16);
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

void SiluMulTiled(const float* gate_up, size_t rows, size_t ff, uint16_t* a, ThreadPool& pool) {
  CHECK_GE(static_cast<int>(ActiveIsa()), static_cast<int>(Isa::kAvx512));
  const size_t kpad = amx::PaddedK(ff);
  const size_t grain = ff >= 1024 ? 4 : 64;
  pool.ParallelFor(rows, grain, [&](size_t begin, size_t end, size_t) {
    for (size_t r = begin; r < end; ++r) {
      const float* g = gate_up + r * 2 * ff;
      SiluMulRowTiledAvx512(g, g + ff, ff, kpad, amx::TiledARow(a, r, kpad));
    }
  });
}

}  // namespace llmserve::kernels::cpu
