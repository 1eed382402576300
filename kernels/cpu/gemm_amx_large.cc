// AMX GEMM for large m (prefill): see gemm_amx_blocks.h.
#include "kernels/cpu/gemm_amx_blocks.h"

#include <type_traits>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"

namespace llmserve::kernels::cpu::amx::internal {
namespace {

// Large-m blocks prefetch (prefetcht0, into L1) the A tiles kL1Ahead k steps
// ahead: on this machine tile loads do not overlap tdpbf16ps, so a load that
// misses L1 stalls the block. A same-process A/B harness (512 × 1024 → 3072,
// one thread, 24-40 interleaved trials, 3 runs) gave median times 10-13%
// lower with it; 1, 2 and 4 steps ahead, and adding the B tiles, were within
// 3% of each other. (Past the end of A it prefetches unrelated addresses,
// which is harmless: prefetches never fault.)
constexpr size_t kL1Ahead = 2;

// One block of up to 32 rows (A tiles a0, a1) × up to 2 panels (B tiles b0,
// b1) over kn tile steps of K. The accumulators start at zero, or from the
// parked tiles c[0..3] when load_c; at the end they go to y (to_y) or are
// parked in c. A and B pointers are at the block's first k step; successive
// k steps are 1 KiB apart.
template <bool kTwoRowBlocks, bool kTwoPanels>
LLMSERVE_AVX512 void Block(const uint8_t* a0, const uint8_t* a1, const uint8_t* b0, const uint8_t* b1,
                           size_t kn, uint8_t* const* c, bool load_c, bool to_y, float* y, size_t ldy,
                           int rows0, int rows1, size_t width0, size_t width1) {
  if (!load_c) {
    LLMSERVE_TILE_ZERO(0);
    if constexpr (kTwoPanels) LLMSERVE_TILE_ZERO(1);
    if constexpr (kTwoRowBlocks) LLMSERVE_TILE_ZERO(2);
    if constexpr (kTwoRowBlocks && kTwoPanels) LLMSERVE_TILE_ZERO(3);
  } else {
    LLMSERVE_TILE_LOAD(0, c[0], 64L);
    if constexpr (kTwoPanels) LLMSERVE_TILE_LOAD(1, c[1], 64L);
    if constexpr (kTwoRowBlocks) LLMSERVE_TILE_LOAD(2, c[2], 64L);
    if constexpr (kTwoRowBlocks && kTwoPanels) LLMSERVE_TILE_LOAD(3, c[3], 64L);
  }
  for (size_t kb = 0; kb < kn; ++kb) {
    // The A tiles kL1Ahead steps on (each is read once per panel pair, so it
    // comes from L2; B tiles are re-read by every row block and stay hot).
    for (int line = 0; line < 16; ++line) {
      __builtin_prefetch(a0 + (kb + kL1Ahead) * 1024 + line * 64, 0, 3);
      if constexpr (kTwoRowBlocks) __builtin_prefetch(a1 + (kb + kL1Ahead) * 1024 + line * 64, 0, 3);
    }
    LLMSERVE_TILE_LOAD(4, a0 + kb * 1024, 64L);
    LLMSERVE_TILE_LOAD(6, b0 + kb * 1024, 64L);
    if constexpr (kTwoRowBlocks) LLMSERVE_TILE_LOAD(5, a1 + kb * 1024, 64L);
    LLMSERVE_TILE_DP(0, 4, 6);
    if constexpr (kTwoPanels) LLMSERVE_TILE_LOAD(7, b1 + kb * 1024, 64L);
    if constexpr (kTwoRowBlocks) LLMSERVE_TILE_DP(2, 5, 6);
    if constexpr (kTwoPanels) LLMSERVE_TILE_DP(1, 4, 7);
    if constexpr (kTwoRowBlocks && kTwoPanels) LLMSERVE_TILE_DP(3, 5, 7);
  }
  if (to_y) {
    LLMSERVE_STORE_C(0, y, ldy, rows0, width0);
    if constexpr (kTwoPanels) LLMSERVE_STORE_C(1, y + 16, ldy, rows0, width1);
    if constexpr (kTwoRowBlocks) LLMSERVE_STORE_C(2, y + 16 * ldy, ldy, rows1, width0);
    if constexpr (kTwoRowBlocks && kTwoPanels) LLMSERVE_STORE_C(3, y + 16 * ldy + 16, ldy, rows1, width1);
  } else {
    LLMSERVE_TILE_STORE(0, c[0], 64L);
    if constexpr (kTwoPanels) LLMSERVE_TILE_STORE(1, c[1], 64L);
    if constexpr (kTwoRowBlocks) LLMSERVE_TILE_STORE(2, c[2], 64L);
    if constexpr (kTwoRowBlocks && kTwoPanels) LLMSERVE_TILE_STORE(3, c[3], 64L);
  }
}

// Large m: rows in chunks of kRowChunk, K in blocks of kKBlock tile steps
// (1024 elements: one block for the hidden-size reductions). Per K block a
// pair of panels' tiles is reused from cache by every row-block pair of the
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
  int config_rows0 = -1, config_rows1 = -1;
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
        for (size_t mb = m0; mb < m1; mb += 32) {
          const int rows = static_cast<int>(m1 - mb < 32 ? m1 - mb : 32);
          const int rows0 = rows < 16 ? rows : 16;
          const int rows1 = rows - rows0;
          if (rows0 != config_rows0 || rows1 != config_rows1) {
            LoadConfig(MakeConfig(rows0, rows1));
            config_rows0 = rows0;
            config_rows1 = rows1;
          }
          const uint8_t* a0 = ab + (mb / 16) * a_block_bytes + kb0 * 1024;
          const uint8_t* a1 = a0 + a_block_bytes;
          float* yp = y + mb * ldy + p * 16;
          // Parked tiles of (row block, panel), rows local to the chunk.
          uint8_t* c[4] = {nullptr, nullptr, nullptr, nullptr};
          if (blocked) {
            const size_t rb = (mb - m0) / 16, pl = p - panel_begin;
            c[0] = scratch.data() + (rb * panels + pl) * 1024;
            c[1] = c[0] + 1024;
            c[2] = c[0] + panels * 1024;
            c[3] = c[2] + 1024;
          }
          auto run = [&](auto two_rows, auto two_cols) {
            Block<decltype(two_rows)::value, decltype(two_cols)::value>(
                a0, a1, b0, b1, kn, c, !first, last, yp, ldy, rows0, rows1, width0, width1);
          };
          using T = std::true_type;
          using F = std::false_type;
          if (rows1 > 0) {
            if (two_panels) run(T{}, T{}); else run(T{}, F{});
          } else if (two_panels) {
            run(F{}, T{});
          } else {
            run(F{}, F{});
          }
        }
      }
    }
  }
}

}  // namespace llmserve::kernels::cpu::amx::internal
