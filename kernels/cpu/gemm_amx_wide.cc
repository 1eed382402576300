// AMX GEMM for small m (decode): see gemm_amx_blocks.h.
#include "kernels/cpu/gemm_amx_blocks.h"

namespace llmserve::kernels::cpu::amx::internal {
namespace {

// For BlockWide: C tiles 0..3 and A tile 4 with `rows` rows, B tiles 5..7.
TileConfig MakeWideConfig(int rows) {
  TileConfig c;
  for (int tile = 0; tile < 8; ++tile) {
    c.rows[tile] = static_cast<uint8_t>(tile <= 4 ? rows : 16);
    c.colsb[tile] = 64;
  }
  return c;
}

// Weight streaming. Measured here (decode-step layers at m = 1, one thread,
// interleaved runs), tile loads that miss the caches stream weights more
// slowly than the AVX-512 FMA kernel's plain loads, and the hardware
// prefetchers alone leave ~10-25% of the bandwidth unused. Blocks that read
// weights from memory therefore prefetch (prefetcht1, into L2) each panel's
// tile kL2Ahead steps ahead. Among 4..16 steps, and against touching the tiles
// with ordinary loads, 8 streamed best.
constexpr size_t kL2Ahead = 8;

inline void PrefetchTileL2(const uint8_t* t) {
  for (int line = 0; line < 16; ++line) __builtin_prefetch(t + line * 64, 0, 2);
}

// Up to 16 rows × kPanels (1..4) consecutive panels over all of K: the shape
// for small m, where weights stream from memory and more panels in flight
// means more concurrent streams. C tiles 0..3, A tile 4, B tiles 5, 6, 7
// (panel 3 reuses tile 5).
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
  if constexpr (kPanels > 2) LLMSERVE_TILE_ZERO(2);
  if constexpr (kPanels > 3) LLMSERVE_TILE_ZERO(3);
  const uint8_t* b1 = b + panel_bytes;
  const uint8_t* b2 = b + 2 * panel_bytes;
  const uint8_t* b3 = b + 3 * panel_bytes;
  for (size_t kb = 0; kb < kb_count; ++kb) {
    if (stream) {
      for (int i = 0; i < kPanels; ++i) PrefetchTileL2(b + i * panel_bytes + (kb + kL2Ahead) * 1024);
    }
    if (next != nullptr && kb % shares == share) {
      for (size_t i = 0; i < next_panels; ++i) PrefetchTileL2(next + i * panel_bytes + kb * 1024);
    }
    LLMSERVE_TILE_LOAD(4, a + kb * 1024, 64L);
    LLMSERVE_TILE_LOAD(5, b + kb * 1024, 64L);
    if constexpr (kPanels > 1) LLMSERVE_TILE_LOAD(6, b1 + kb * 1024, 64L);
    if constexpr (kPanels > 2) LLMSERVE_TILE_LOAD(7, b2 + kb * 1024, 64L);
    LLMSERVE_TILE_DP(0, 4, 5);
    if constexpr (kPanels > 1) LLMSERVE_TILE_DP(1, 4, 6);
    if constexpr (kPanels > 2) LLMSERVE_TILE_DP(2, 4, 7);
    if constexpr (kPanels > 3) {
      LLMSERVE_TILE_LOAD(5, b3 + kb * 1024, 64L);
      LLMSERVE_TILE_DP(3, 4, 5);
    }
  }
  LLMSERVE_STORE_C(0, y, ldy, rows, kPanels == 1 ? last_width : 16);
  if constexpr (kPanels > 1) LLMSERVE_STORE_C(1, y + 16, ldy, rows, kPanels == 2 ? last_width : 16);
  if constexpr (kPanels > 2) LLMSERVE_STORE_C(2, y + 32, ldy, rows, kPanels == 3 ? last_width : 16);
  if constexpr (kPanels > 3) LLMSERVE_STORE_C(3, y + 48, ldy, rows, last_width);
}

}  // namespace

// Groups of 4 panels, all row blocks of 16 per group.
void GemmWide(const uint8_t* ab, size_t m, const uint8_t* wb, size_t panel_bytes,
              size_t kb_count, size_t n, float* y, size_t ldy, size_t panel_begin,
              size_t panel_end) {
  const size_t row_blocks = (m + 15) / 16;
  int config_rows = -1;
  for (size_t p = panel_begin; p < panel_end; p += 4) {
    const size_t count = panel_end - p < 4 ? panel_end - p : 4;
    const size_t last_col = (p + count - 1) * 16;
    const size_t last_width = n - last_col < 16 ? n - last_col : 16;
    const uint8_t* b = wb + p * panel_bytes;
    const size_t next_panels =
        panel_end - (p + count) < 4 ? panel_end - (p + count) : 4;
    for (size_t rb = 0; rb < row_blocks; ++rb) {
      const int rows = static_cast<int>(m - rb * 16 < 16 ? m - rb * 16 : 16);
      if (rows != config_rows) {
        LoadConfig(MakeWideConfig(rows));
        config_rows = rows;
      }
      const uint8_t* a = ab + rb * kb_count * 1024;
      float* yp = y + rb * 16 * ldy + p * 16;
      const bool stream = rb == 0;
      const uint8_t* next = rb > 0 && next_panels > 0 ? b + count * panel_bytes : nullptr;
      const size_t share = rb > 0 ? rb - 1 : 0;
      const size_t shares = row_blocks > 1 ? row_blocks - 1 : 1;
      switch (count) {
        case 4:
          BlockWide<4>(a, b, panel_bytes, kb_count, yp, ldy, rows, last_width, stream, next,
                       next_panels, share, shares);
          break;
        case 3:
          BlockWide<3>(a, b, panel_bytes, kb_count, yp, ldy, rows, last_width, stream, next,
                       next_panels, share, shares);
          break;
        case 2:
          BlockWide<2>(a, b, panel_bytes, kb_count, yp, ldy, rows, last_width, stream, next,
                       next_panels, share, shares);
          break;
        default:
          BlockWide<1>(a, b, panel_bytes, kb_count, yp, ldy, rows, last_width, stream, next,
                       next_panels, share, shares);
          break;
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu::amx::internal
