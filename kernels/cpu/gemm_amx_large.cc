// AMX GEMM for large m (prefill): see gemm_amx_blocks.h.
#include "kernels/cpu/gemm_amx_blocks.h"

#include <vector>

#include "kernels/cpu/aligned_buffer.h"

namespace llmserve::kernels::cpu::amx::internal {
namespace {

// Large-m blocks prefetch (prefetcht0, into L1) the A tiles kL1Ahead k steps
// ahead: tile loads do not overlap tdpbf16ps, so a load that misses L1 stalls
// the block. One, two or four steps ahead, with or without the B tiles, did
// about equally well (figures: docs/perf/2026-11-22-amx-gemm.md). (Past the
// end of A it prefetches unrelated addresses, which is harmless: prefetches
// never fault.)
constexpr size_t kL1Ahead = 2;

// One block of up to 16 rows (A tile a) × up to 2 panels (B tiles b0, b1)
// over kn tile steps of K: C tiles 0, 1, A tile 4, B tiles 6, 7. The
// accumulators start at zero, or from the parked tiles c[0..1] when load_c;
// at the end they go to y (to_y) or are parked in c. A and B pointers are at
// the block's first k step; successive k steps are 1 KiB apart.
//
// One row block rather than the textbook 2 × 2 (two A tiles sharing two B
// tiles, one load per tdpbf16ps): the 2 × 2 block ran slower per product on
// the prefill shapes (figures: docs/perf/2026-11-22-amx-tile-blocks.md).
template <bool kTwoPanels>
LLMSERVE_AVX512 void Block(const uint8_t* a, const uint8_t* b0, const uint8_t* b1, size_t kn,
                           uint8_t* const* c, bool load_c, bool to_y, float* y, size_t ldy, int rows,
                           size_t width0, size_t width1) {
  if (!load_c) {
    LLMSERVE_TILE_ZERO(0);
    if constexpr (kTwoPanels) LLMSERVE_TILE_ZERO(1);
  } else {
    LLMSERVE_TILE_LOAD(0, c[0], 64L);
    if constexpr (kTwoPanels) LLMSERVE_TILE_LOAD(1, c[1], 64L);
  }
  for (size_t kb = 0; kb < kn; ++kb) {
    // The A tile kL1Ahead steps on (each is read once per panel pair, so it
    // comes from L2; B tiles are re-read by every row block and stay hot).
    for (int line = 0; line < 16; ++line) __builtin_prefetch(a + (kb + kL1Ahead) * 1024 + line * 64, 0, 3);
    MultiplyStep<kTwoPanels>(a + kb * 1024, b0 + kb * 1024, b1 + kb * 1024);
  }
  if (to_y) {
    LLMSERVE_STORE_C(0, y, ldy, rows, width0);
    if constexpr (kTwoPanels) LLMSERVE_STORE_C(1, y + 16, ldy, rows, width1);
  } else {
    LLMSERVE_TILE_STORE(0, c[0], 64L);
    if constexpr (kTwoPanels) LLMSERVE_TILE_STORE(1, c[1], 64L);
  }
}

// Large m: rows in chunks of kRowChunk, K in blocks of kKBlock tile steps
// (1024 elements: one block for the hidden-size reductions). Per K block a
// pair of panels' tiles is reused from cache by every row block of the
// chunk, whose A tiles are contiguous; between K blocks the accumulators are
// parked in a per-thread scratch (fp32 store and reload: exact).
constexpr size_t kKBlock = 32;
constexpr size_t kRowChunk = 256;

}  // namespace

void GemmLarge(const uint8_t* ab, size_t m, const uint8_t* wb, size_t panel_bytes, size_t kb_count,
               size_t n, float* y, size_t ldy, size_t panel_begin, size_t panel_end) {
  const size_t panels = panel_end - panel_begin;
  const size_t a_block_bytes = kb_count * 1024;  // one row block of A
  thread_local std::vector<uint8_t, AlignedAllocator<uint8_t>> scratch;
  const bool blocked = kb_count > kKBlock;
  if (blocked && scratch.size() < kRowChunk / 16 * panels * 1024) scratch.resize(kRowChunk / 16 * panels * 1024);
  int config_rows = -1;
  for (size_t m0 = 0; m0 < m; m0 += kRowChunk) {
    const size_t m1 = m - m0 < kRowChunk ? m : m0 + kRowChunk;
    for (size_t kb0 = 0; kb0 < kb_count; kb0 += kKBlock) {
      const size_t kn = kb_count - kb0 < kKBlock ? kb_count - kb0 : kKBlock;
      const bool first = kb0 == 0, last = kb0 + kn == kb_count;
      for (size_t p = panel_begin; p < panel_end; p += 2) {
        const bool two_panels = p + 1 < panel_end;
        const size_t width0 = n - p * 16 < 16 ? n - p * 16 : 16;
        const size_t width1 = two_panels ? (n - (p + 1) * 16 < 16 ? n - (p + 1) * 16 : 16) : 0;
        const uint8_t* b0 = wb + p * panel_bytes + kb0 * 1024;
        const uint8_t* b1 = b0 + panel_bytes;
        for (size_t mb = m0; mb < m1; mb += 16) {
          const int rows = static_cast<int>(m1 - mb < 16 ? m1 - mb : 16);
          if (rows != config_rows) {
            LoadConfig(MakeConfig(rows, 0));
            config_rows = rows;
          }
          const uint8_t* a = ab + (mb / 16) * a_block_bytes + kb0 * 1024;
          float* yp = y + mb * ldy + p * 16;
          // Parked tiles of (row block, panel), rows local to the chunk.
          uint8_t* c[2] = {nullptr, nullptr};
          if (blocked) {
            c[0] = scratch.data() + ((mb - m0) / 16 * panels + (p - panel_begin)) * 1024;
            c[1] = c[0] + 1024;
          }
          if (two_panels) {
            Block<true>(a, b0, b1, kn, c, !first, last, yp, ldy, rows, width0, width1);
          } else {
            Block<false>(a, b0, b1, kn, c, !first, last, yp, ldy, rows, width0, width1);
          }
        }
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu::amx::internal
