#pragma once
// Internals shared by the AMX GEMM files: the two block loops behind
// amx::Gemm (gemm_amx_wide.cc for small m, gemm_amx_large.cc for large m)
// and the C-tile store they both end with. Both give each output element the
// same sequence of operations (see gemm_amx.h), so a row's result does not
// depend on which of them ran.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/amx_tiles.h"

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))

namespace llmserve::kernels::cpu::amx::internal {

// Small m (<= kWideMaxRows): GemmWide; larger m: GemmLarge.
constexpr size_t kWideMaxRows = 64;

// Panels [panel_begin, panel_end) of y for m <= kWideMaxRows rows: weights
// stream from memory once, every row block reuses them from cache.
void GemmWide(const uint8_t* ab, size_t m, const uint8_t* wb, size_t panel_bytes, size_t kb_count,
              size_t n, float* y, size_t ldy, size_t panel_begin, size_t panel_end);

// The same for large m: over row chunks and K blocks, parking the
// accumulators between K blocks.
void GemmLarge(const uint8_t* ab, size_t m, const uint8_t* wb, size_t panel_bytes, size_t kb_count,
               size_t n, float* y, size_t ldy, size_t panel_begin, size_t panel_end);

// One k step of the 1 × 2 block both loops use: A tile 4 (rows of the row
// block), B tiles 6, 7 (one or two panels), C tiles 0, 1 += A · B — the
// MakeConfig(rows, 0) shape. It beat the 2 × 2 block and four-panel groups
// (figures: docs/perf/2026-11-22-amx-tile-blocks.md).
template <bool kTwoPanels>
inline void MultiplyStep(const uint8_t* a, const uint8_t* b0, const uint8_t* b1) {
  LLMSERVE_TILE_LOAD(4, a, 64L);
  LLMSERVE_TILE_LOAD(6, b0, 64L);
  if constexpr (kTwoPanels) LLMSERVE_TILE_LOAD(7, b1, 64L);
  LLMSERVE_TILE_DP(0, 4, 6);
  if constexpr (kTwoPanels) LLMSERVE_TILE_DP(1, 4, 7);
}

}  // namespace llmserve::kernels::cpu::amx::internal

// Stores the C tile `t` (rows × 16) to outputs [col, col + width) of rows
// starting at y.
#define LLMSERVE_STORE_C(t, y, ldy, rows, width)                                 \
  do {                                                                          \
    if ((width) == 16) {                                                        \
      LLMSERVE_TILE_STORE(t, (y), static_cast<long>((ldy) * sizeof(float)));   \
    } else {                                                                    \
      alignas(64) float tmp[16 * 16];                                           \
      LLMSERVE_TILE_STORE(t, tmp, 64L);                                         \
      for (int r_ = 0; r_ < (rows); ++r_)                                       \
        std::memcpy((y) + r_ * (ldy), tmp + r_ * 16, (width) * sizeof(float));  \
    }                                                                           \
  } while (0)
