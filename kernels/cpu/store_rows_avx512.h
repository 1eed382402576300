#pragma once
// The last step of a GEMM register block: its MR × NR fp32 sums (NR panels of
// 16 columns) into rows of y. For kernels compiled with a per-function target
// attribute that includes avx512f.
#include <immintrin.h>

#include <cstddef>

#include "kernels/cpu/avx512_mask.h"

namespace llmserve::kernels::cpu {

// Row r of the block goes to y + r * ldy; `width` = valid columns of the last
// panel (the others are stored whole).
template <int MR, int NR>
__attribute__((target("avx512f"), always_inline)) inline void StoreRows(const __m512 (&acc)[MR][NR], float* y,
                                                                        size_t ldy, size_t width) {
  const __mmask16 last_mask = LowMask(width);
  for (int r = 0; r < MR; ++r) {
    for (int j = 0; j < NR; ++j) {
      float* out = y + r * ldy + j * 16;
      if (j + 1 < NR || width == 16) {
        _mm512_storeu_ps(out, acc[r][j]);
      } else {
        _mm512_mask_storeu_ps(out, last_mask, acc[r][j]);
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu
