// AVX-512 kernels for the P16 layout. Only reached after run-time dispatch
// (Isa::kAvx512 or better); every function here carries the target attribute.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_* helpers as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "kernels/cpu/gemm_p16.h"
#include "kernels/cpu/store_rows_avx512.h"

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define LLMSERVE_AVX512_INLINE LLMSERVE_AVX512 __attribute__((always_inline)) inline

namespace llmserve::kernels::cpu::p16 {
namespace {

template <WeightDType kDType>
LLMSERVE_AVX512_INLINE __m512 Load16(const uint8_t* p) {
  if constexpr (kDType == WeightDType::kF32) {
    return _mm512_loadu_ps(p);
  } else if constexpr (kDType == WeightDType::kBF16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
}

// MR rows × NR consecutive panels, full K. `width` = valid columns of the last panel.
template <WeightDType kDType, int MR, int NR>
LLMSERVE_AVX512 void Block(const float* x, size_t ldx, const uint8_t* w, size_t k_count,
                           float* y, size_t ldy, size_t width) {
  constexpr size_t kEs = kDType == WeightDType::kF32 ? 4 : 2;
  const size_t panel_stride = k_count * 16 * kEs;
  __m512 acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = _mm512_setzero_ps();
  for (size_t k = 0; k < k_count; ++k) {
    __m512 wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = Load16<kDType>(w + j * panel_stride + k * 16 * kEs);
    for (int r = 0; r < MR; ++r) {
      const __m512 xb = _mm512_set1_ps(x[r * ldx + k]);
      for (int j = 0; j < NR; ++j) acc[r][j] = _mm512_fmadd_ps(xb, wv[j], acc[r][j]);
    }
  }
  StoreRows<MR, NR>(acc, y, ldy, width);
}

template <WeightDType kDType, int MR, int NR>
LLMSERVE_AVX512 void Rows(const Problem& p, size_t i, size_t panel, size_t width) {
  constexpr size_t kEs = kDType == WeightDType::kF32 ? 4 : 2;
  Block<kDType, MR, NR>(p.x + i * p.ldx, p.ldx, p.w + panel * p.k * 16 * kEs, p.k,
                        p.y + i * p.ldy + panel * 16, p.ldy, width);
}

// Panels [pb, pe) in groups of NR (one remainder group of fewer), rows in
// blocks of MR (a remainder block of fewer).
template <WeightDType kDType, int MR, int NR>
LLMSERVE_AVX512 void Run(const Problem& p, size_t pb, size_t pe) {
  using Fn = void (*)(const Problem&, size_t, size_t, size_t);
  // table[mr - 1][nr - 1]
  static constexpr Fn kTable[6][8] = {
#define LLMSERVE_ROW(M)                                                                       \
  {&Rows<kDType, M, 1>, &Rows<kDType, M, 2>, &Rows<kDType, M, 3>, &Rows<kDType, M, 4>,        \
   &Rows<kDType, M, 5>, &Rows<kDType, M, 6>, &Rows<kDType, M, 7>, &Rows<kDType, M, 8>}
      LLMSERVE_ROW(1), LLMSERVE_ROW(2), LLMSERVE_ROW(3),
      LLMSERVE_ROW(4), LLMSERVE_ROW(5), LLMSERVE_ROW(6)};
#undef LLMSERVE_ROW
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
LLMSERVE_AVX512 void Dispatch(const Problem& p, size_t pb, size_t pe) {
  if (p.m == 1) {
    Run<kDType, 1, 8>(p, pb, pe);  // decode: 8 independent streams keep the loads flowing
  } else {
    Run<kDType, 6, 4>(p, pb, pe);
  }
}

}  // namespace

void GemmAvx512(const Problem& p, size_t panel_begin, size_t panel_end) {
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
