// AVX2 + FMA + F16C kernels for the P16 layout (CPUs without AVX-512). Only
// reached after run-time dispatch; every function here carries the target
// attribute. A panel of 16 outputs is two ymm halves.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_* helpers as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "kernels/cpu/gemm_p16.h"

#define LLMSERVE_AVX2 __attribute__((target("avx2,fma,f16c")))
#define LLMSERVE_AVX2_INLINE LLMSERVE_AVX2 __attribute__((always_inline)) inline

namespace llmserve::kernels::cpu::p16 {
namespace {

// Outputs 8h .. 8h+7 of a panel row.
template <WeightDType kDType>
LLMSERVE_AVX2_INLINE __m256 Load8(const uint8_t* p) {
  if constexpr (kDType == WeightDType::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (kDType == WeightDType::kBF16) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
}

template <WeightDType kDType, int MR, int NR>
LLMSERVE_AVX2 void Block(const float* x, size_t ldx, const uint8_t* w, size_t k_count, float* y,
                         size_t ldy, size_t width) {
  constexpr size_t kEs = kDType == WeightDType::kF32 ? 4 : 2;
  const size_t panel_stride = k_count * 16 * kEs;
  __m256 acc[MR][2 * NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 2 * NR; ++j) acc[r][j] = _mm256_setzero_ps();
  for (size_t k = 0; k < k_count; ++k) {
    __m256 wv[2 * NR];
    for (int j = 0; j < 2 * NR; ++j)
      wv[j] = Load8<kDType>(w + (j / 2) * panel_stride + (k * 16 + (j % 2) * 8) * kEs);
    for (int r = 0; r < MR; ++r) {
      const __m256 xb = _mm256_broadcast_ss(x + r * ldx + k);
      for (int j = 0; j < 2 * NR; ++j) acc[r][j] = _mm256_fmadd_ps(xb, wv[j], acc[r][j]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < NR; ++j) {
      float* out = y + r * ldy + j * 16;
      if (j + 1 < NR || width == 16) {
        _mm256_storeu_ps(out, acc[r][2 * j]);
        _mm256_storeu_ps(out + 8, acc[r][2 * j + 1]);
      } else {
        alignas(32) float tmp[16];
        _mm256_store_ps(tmp, acc[r][2 * j]);
        _mm256_store_ps(tmp + 8, acc[r][2 * j + 1]);
        for (size_t c = 0; c < width; ++c) out[c] = tmp[c];
      }
    }
  }
}

template <WeightDType kDType, int MR, int NR>
LLMSERVE_AVX2 void Rows(const Problem& p, size_t i, size_t panel, size_t width) {
  constexpr size_t kEs = kDType == WeightDType::kF32 ? 4 : 2;
  Block<kDType, MR, NR>(p.x + i * p.ldx, p.ldx, p.w + panel * p.k * 16 * kEs, p.k,
                        p.y + i * p.ldy + panel * 16, p.ldy, width);
}

template <WeightDType kDType, int MR, int NR>
LLMSERVE_AVX2 void Run(const Problem& p, size_t pb, size_t pe) {
  using Fn = void (*)(const Problem&, size_t, size_t, size_t);
  static constexpr Fn kTable[2][4] = {
      {&Rows<kDType, 1, 1>, &Rows<kDType, 1, 2>, &Rows<kDType, 1, 3>, &Rows<kDType, 1, 4>},
      {&Rows<kDType, 2, 1>, &Rows<kDType, 2, 2>, &Rows<kDType, 2, 3>, &Rows<kDType, 2, 4>}};
  for (size_t panel = pb; panel < pe; panel += NR) {
    const size_t nr = pe - panel < NR ? pe - panel : NR;
    const size_t last_col = (panel + nr - 1) * 16;
    const size_t width = p.n - last_col < 16 ? p.n - last_col : 16;
    for (size_t i = 0; i < p.m; i += MR) {
      const size_t mr = p.m - i < MR ? p.m - i : MR;
      kTable[mr - 1][nr - 1](p, i, panel, width);
    }
  }
}

template <WeightDType kDType>
LLMSERVE_AVX2 void Dispatch(const Problem& p, size_t pb, size_t pe) {
  if (p.m == 1) {
    Run<kDType, 1, 4>(p, pb, pe);
  } else {
    Run<kDType, 2, 2>(p, pb, pe);
  }
}

}  // namespace

void GemmAvx2(const Problem& p, size_t panel_begin, size_t panel_end) {
  switch (p.dtype) {
    case WeightDType::kF32: return Dispatch<WeightDType::kF32>(p, panel_begin, panel_end);
    case WeightDType::kBF16: return Dispatch<WeightDType::kBF16>(p, panel_begin, panel_end);
    case WeightDType::kF16: return Dispatch<WeightDType::kF16>(p, panel_begin, panel_end);
    case WeightDType::kI8:
    case WeightDType::kI32:
    case WeightDType::kF8E4M3: break;  // LinearWeight::Pack refuses them
  }
}

}  // namespace llmserve::kernels::cpu::p16
