// AMX kernels. Only reached after run-time dispatch (Isa::kAmx: cpuid, XCR0 and
// the arch_prctl permission). Tile instructions are written as inline assembly
// with memory clobbers so that the compiler orders them with ordinary loads
// and stores, and so no AMX target flag is needed to compile this file.
#include "kernels/cpu/gemm_amx.h"

#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_* helpers as (maybe-)uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/amx_tiles.h"

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")))

namespace llmserve::kernels::cpu::amx {
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

// Weight streaming. Measured here (decode-step layers at m = 1, one thread,
// interleaved runs), tile loads that miss the caches stream weights more
// slowly than the AVX-512 FMA kernel's plain loads, and the hardware
// prefetchers alone leave ~10-25% of the bandwidth unused. Blocks that read
// weights from memory therefore prefetch (prefetcht1, into L2) each panel's
// tile kL2Ahead steps ahead. Among 4..16 steps, and against touching the tiles
// with ordinary loads, 8 streamed best.
constexpr size_t kL2Ahead = 8;

// Large-m blocks prefetch (prefetcht0, into L1) the A tiles kL1Ahead k steps
// ahead: on this machine tile loads do not overlap tdpbf16ps, so a load that
// misses L1 stalls the block. A same-process A/B harness (512 × 1024 → 3072,
// one thread, 24-40 interleaved trials, 3 runs) gave median times 10-13%
// lower with it; 1, 2 and 4 steps ahead, and adding the B tiles, were within
// 3% of each other. (Past the end of A it prefetches unrelated addresses,
// which is harmless: prefetches never fault.)
constexpr size_t kL1Ahead = 2;

inline void PrefetchTileL2(const uint8_t* t) {
  for (int line = 0; line < 16; ++line) __builtin_prefetch(t + line * 64, 0, 2);
}

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

// Small m (<= kWideMaxRows): groups of 4 panels, all row blocks of 16 per group.
constexpr size_t kWideMaxRows = 64;

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

// Large m: rows in chunks of kRowChunk, K in blocks of kKBlock tile steps
// (1024 elements: one block for the hidden-size reductions). Per K block a
// pair of panels' tiles is reused from cache by every row-block pair of the
// chunk, whose A tiles are contiguous; between K blocks the accumulators are
// parked in a per-thread scratch (fp32 store and reload: exact).
constexpr size_t kKBlock = 32;
constexpr size_t kRowChunk = 256;

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

LLMSERVE_AVX512 void ConvertRowsAvx512(const float* x, size_t ldx, size_t k, size_t r0, size_t r1,
                                       uint16_t* a, size_t kpad) {
  const __m512i round = _mm512_set1_epi32(0x7fff);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i quiet = _mm512_set1_epi32(0x40);
  const size_t kb_count = kpad / 32;
  for (size_t r = r0; r < r1; ++r) {
    const float* src = x + r * ldx;
    // Row r's k-th element sits in tile (r / 16, k / 32), row r % 16.
    uint16_t* dst = a + (r / 16) * kb_count * 512 + (r % 16) * 32;
    for (size_t c = 0; c < kpad; c += 16) {
      const size_t left = c < k ? k - c : 0;
      const __mmask16 mask = left >= 16 ? static_cast<__mmask16>(0xffff)
                                        : static_cast<__mmask16>((1u << left) - 1);
      const __m512 v = _mm512_maskz_loadu_ps(mask, src + c);
      const __m512i u = _mm512_castps_si512(v);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
      __m512i r16 = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(round, lsb)), 16);
      const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      r16 = _mm512_mask_mov_epi32(r16, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), quiet));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + (c / 32) * 512 + c % 32),
                          _mm512_cvtepi32_epi16(r16));
    }
  }
}

uint16_t ToBf16Bits(const uint8_t* base, WeightDType dtype, size_t index) {
  switch (dtype) {
    case WeightDType::kBF16: {
      uint16_t b;
      std::memcpy(&b, base + index * 2, 2);
      return b;
    }
    case WeightDType::kF16: {
      uint16_t b;
      std::memcpy(&b, base + index * 2, 2);
      return F32ToBf16(F16ToF32(b));
    }
    case WeightDType::kF32: {
      float f;
      std::memcpy(&f, base + index * 4, 4);
      return F32ToBf16(f);
    }
  }
  return 0;
}

}  // namespace

void PackReference(const void* src, WeightDType dtype, size_t rows, size_t cols, size_t row_stride,
                   uint16_t* dst) {
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t kpad = PaddedK(cols);
  const size_t panels = (rows + 15) / 16;
  std::memset(dst, 0, PackedBytes(rows, cols));
  std::vector<uint16_t> row(kpad);
  for (size_t p = 0; p < panels; ++p) {
    // Pairs (k, k + 1) of one row are 32-bit units; unit q of row n goes to
    // tile q / 16, tile row q % 16, column n.
    auto* panel = reinterpret_cast<uint32_t*>(dst + p * kpad * 16);
    for (size_t n = 0; n < 16 && p * 16 + n < rows; ++n) {
      const size_t r = p * 16 + n;
      for (size_t c = 0; c < cols; ++c) row[c] = ToBf16Bits(s, dtype, r * row_stride + c);
      for (size_t c = cols; c < kpad; ++c) row[c] = 0;
      const uint16_t* in = row.data();
      for (size_t q = 0; q < kpad / 2; ++q) {
        uint32_t pair;
        std::memcpy(&pair, in + 2 * q, 4);
        panel[(q / 16) * 256 + (q % 16) * 16 + n] = pair;
      }
    }
  }
}

namespace {

// Transposes a 16 × 16 matrix of 32-bit units: rows in[0..15] (each 16
// units, in[n] at in + n * in_stride units) to out rows q = 0..15 (64 bytes
// apart): out[q][n] = in[n][q].
LLMSERVE_AVX512 void Transpose16x16(const uint32_t* in, size_t in_stride, uint32_t* out) {
  __m512i r[16], t[16];
  for (int n = 0; n < 16; ++n) r[n] = _mm512_loadu_si512(in + n * in_stride);
  // Per 128-bit lane L: t[2i], t[2i + 1] hold rows 2i, 2i + 1 of columns
  // 4L, 4L + 1 and 4L + 2, 4L + 3.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + j], lane L: rows 4i..4i + 3 of column 4L + j.
  for (int i = 0; i < 4; ++i) {
    r[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i + 0], t[4 * i + 2]);
    r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i + 0], t[4 * i + 2]);
    r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  // Output row 4L + j gathers lane L of r[j], r[4 + j], r[8 + j], r[12 + j].
  for (int j = 0; j < 4; ++j) {
    const __m512i x0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44);
    const __m512i x1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xee);
    const __m512i y0 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44);
    const __m512i y1 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xee);
    _mm512_store_si512(out + (0 + j) * 16, _mm512_shuffle_i32x4(x0, y0, 0x88));
    _mm512_store_si512(out + (4 + j) * 16, _mm512_shuffle_i32x4(x0, y0, 0xdd));
    _mm512_store_si512(out + (8 + j) * 16, _mm512_shuffle_i32x4(x1, y1, 0x88));
    _mm512_store_si512(out + (12 + j) * 16, _mm512_shuffle_i32x4(x1, y1, 0xdd));
  }
}

}  // namespace

void Pack(const void* src, WeightDType dtype, size_t rows, size_t cols, size_t row_stride,
          uint16_t* dst) {
  const auto* s = static_cast<const uint8_t*>(src);
  const size_t kpad = PaddedK(cols);
  const size_t panels = (rows + 15) / 16;
  // A panel's 16 rows as bf16, zero-padded to kpad (and to 16 rows); each
  // 1 KiB tile is then a 16 × 16 transpose of 32-bit pairs.
  std::vector<uint16_t, AlignedAllocator<uint16_t>> staging(16 * kpad);
  for (size_t p = 0; p < panels; ++p) {
    for (size_t n = 0; n < 16; ++n) {
      uint16_t* row = staging.data() + n * kpad;
      const size_t r = p * 16 + n;
      size_t c = 0;
      if (r < rows) {
        if (dtype == WeightDType::kBF16) {
          std::memcpy(row, s + r * row_stride * 2, cols * 2);
          c = cols;
        } else {
          for (; c < cols; ++c) row[c] = ToBf16Bits(s, dtype, r * row_stride + c);
        }
      }
      std::memset(row + c, 0, (kpad - c) * 2);
    }
    uint16_t* panel = dst + p * kpad * 16;
    for (size_t kb = 0; kb < kpad / 32; ++kb) {
      Transpose16x16(reinterpret_cast<const uint32_t*>(staging.data() + kb * 32), kpad / 2,
                     reinterpret_cast<uint32_t*>(panel + kb * 512));
    }
  }
}

void ConvertRows(const float* x, size_t ldx, size_t k, size_t r0, size_t r1, uint16_t* a,
                 size_t kpad) {
  ConvertRowsAvx512(x, ldx, k, r0, r1, a, kpad);
}

void Gemm(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
          size_t ldy, size_t panel_begin, size_t panel_end) {
  if (m == 0 || panel_begin >= panel_end) return;
  const size_t kb_count = kpad / 32;
  const size_t panel_bytes = kpad * 16 * 2;
  const auto* wb = reinterpret_cast<const uint8_t*>(w);
  const auto* ab = reinterpret_cast<const uint8_t*>(a);
  if (m <= kWideMaxRows) {
    GemmWide(ab, m, wb, panel_bytes, kb_count, n, y, ldy, panel_begin, panel_end);
    Release();
    return;
  }
  GemmLarge(ab, m, wb, panel_bytes, kb_count, n, y, ldy, panel_begin, panel_end);
  Release();
}

}  // namespace llmserve::kernels::cpu::amx
