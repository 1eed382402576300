// AMX GEMM for small m (decode): see gemm_amx_blocks.h.
#include "kernels/cpu/gemm_amx_blocks.h"

namespace llmserve::kernels::cpu::amx::internal {
namespace {

// Weight streaming. Tile loads that miss the caches stream weights more
// slowly than the AVX-512 FMA kernel's plain loads, and the hardware
// prefetchers alone leave part of the bandwidth unused. Blocks that read
// weights from memory therefore prefetch (prefetcht1, into L2) each panel's
// tile kL2Ahead steps ahead. Among 4..16 steps, and against touching the tiles
// with ordinary loads, 8 streamed best (figures:
// docs/perf/2026-11-22-amx-gemm.md).
constexpr size_t kL2Ahead = 8;

inline void PrefetchTileL2(const uint8_t* t) {
  for (int line = 0; line < 16; ++line) __builtin_prefetch(t + line * 64, 0, 2);
}

// Up to 16 rows × kPanels (1 or 2) consecutive panels over all of K: C tiles
// 0, 1, A tile 4, B tiles 6, 7 (the MakeConfig(rows, 0) shape).
//  stream: this block is the first to read these panels (prefetch ahead).
//  next, next_panels, share, shares: while the panels are already cached (row
//  blocks after the first), prefetch into L2 the tiles kb of the next panel
//  group with kb % shares == share, so that group streams in meanwhile.
template <int kPanels>
LLMSERVE_AVX512 void BlockWide(const uint8_t* a, const uint8_t* b, size_t panel_bytes,
                               size_t kb_count, float* y, size_t ldy, int rows, size_t last_width,
                               bool stream, const uint8_t* next, size_t next_panels, size_t share,
                               size_t shares) {
  LLMSERVE_TILE_ZERO(0);
  if constexpr (kPanels > 1) LLMSERVE_TILE_ZERO(1);
  const uint8_t* b1 = b + panel_bytes;
  for (size_t kb = 0; kb < kb_count; ++kb) {
    if (stream) {
      for (int i = 0; i < kPanels; ++i) PrefetchTileL2(b + i * panel_bytes + (kb + kL2Ahead) * 1024);
    }
    if (next != nullptr && kb % shares == share) {
      for (size_t i = 0; i < next_panels; ++i) PrefetchTileL2(next + i * panel_bytes + kb * 1024);
    }
    MultiplyStep<(kPanels > 1)>(a + kb * 1024, b + kb * 1024, b1 + kb * 1024);
  }
  LLMSERVE_STORE_C(0, y, ldy, rows, kPanels == 1 ? last_width : 16);
  if constexpr (kPanels > 1) LLMSERVE_STORE_C(1, y + 16, ldy, rows, last_width);
}

// Panels per group. Two rather than four (one A tile load per four
// products): two-panel groups were faster for Linear at decode sizes and for
// the whole decode step, and one or three panels were no better than two
// (figures: docs/perf/2026-11-22-amx-tile-blocks.md).
constexpr size_t kGroupPanels = 2;

}  // namespace

// Groups of kGroupPanels panels, all row blocks of 16 per group.
void GemmWide(const uint8_t* ab, size_t m, const uint8_t* wb, size_t panel_bytes,
              size_t kb_count, size_t n, float* y, size_t ldy, size_t panel_begin,
              size_t panel_end) {
  const size_t row_blocks = (m + 15) / 16;
  int config_rows = -1;
  for (size_t p = panel_begin; p < panel_end; p += kGroupPanels) {
    const size_t count = panel_end - p < kGroupPanels ? panel_end - p : kGroupPanels;
    const size_t last_col = (p + count - 1) * 16;
    const size_t last_width = n - last_col < 16 ? n - last_col : 16;
    const uint8_t* b = wb + p * panel_bytes;
    const size_t next_panels =
        panel_end - (p + count) < kGroupPanels ? panel_end - (p + count) : kGroupPanels;
    for (size_t rb = 0; rb < row_blocks; ++rb) {
      const int rows = static_cast<int>(m - rb * 16 < 16 ? m - rb * 16 : 16);
      if (rows != config_rows) {
        LoadConfig(MakeConfig(rows, 0));
        config_rows = rows;
      }
      const uint8_t* a = ab + rb * kb_count * 1024;
      float* yp = y + rb * 16 * ldy + p * 16;
      const bool stream = rb == 0;
      const uint8_t* next = rb > 0 && next_panels > 0 ? b + count * panel_bytes : nullptr;
      const size_t share = rb > 0 ? rb - 1 : 0;
      const size_t shares = row_blocks > 1 ? row_blocks - 1 : 1;
      if (count == 2) {
        BlockWide<2>(a, b, panel_bytes, kb_count, yp, ldy, rows, last_width, stream, next,
                     next_panels, share, shares);
      } else {
        BlockWide<1>(a, b, panel_bytes, kb_count, yp, ldy, rows, last_width, stream, next,
                     next_panels, share, shares);
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu::amx::internal
