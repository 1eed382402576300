// AVX512-BF16 GEMM over the AMX layouts: see gemm_dpbf16.h. Only reached
// after run-time dispatch (Isa::kAvx512Bf16 or better); every function that
// uses the instructions carries the target attribute.
#include "kernels/cpu/gemm_dpbf16.h"

#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/store_rows_avx512.h"

// GCC 12 reports its own _mm512_undefined_* helpers as (maybe-)uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define LLMSERVE_AVX512BF16 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,fma")))

namespace llmserve::kernels::cpu::dpbf16 {
namespace {

constexpr size_t kTileBytes = 1024;  // one 16 × 64-byte tile of A or W
constexpr int kMaxRows = 8;          // rows of a register block
constexpr int kMaxPanels = 8;        // panels of a register block

// The k-pair word at p broadcast to all 16 lanes.
LLMSERVE_AVX512BF16 inline __m512bh BroadcastPair(const uint8_t* p) {
  int32_t pair;
  std::memcpy(&pair, p, 4);
  return reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
}

// One k tile (16 k pairs) of an MR-row × NR-panel register block: A rows
// 64 bytes apart at `at`, the panels' tiles panel_bytes apart at `wt`. With
// `prefetch` (or null), one line per panel and pair is pulled into L1 from
// there. Inlined, so the sums stay in registers.
template <int MR, int NR>
LLMSERVE_AVX512BF16 __attribute__((always_inline)) inline void AccumulateTile(__m512 (&acc)[MR][NR], const uint8_t* at,
                                                                             const uint8_t* wt, size_t panel_bytes,
                                                                             const uint8_t* prefetch) {
  for (int q = 0; q < 16; ++q) {
    if (prefetch != nullptr) {
      for (int j = 0; j < NR; ++j)
        _mm_prefetch(reinterpret_cast<const char*>(prefetch + j * panel_bytes + q * 64), _MM_HINT_T0);
    }
    __m512bh wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = reinterpret_cast<__m512bh>(_mm512_load_si512(wt + j * panel_bytes + q * 64));
    for (int r = 0; r < MR; ++r) {
      const __m512bh x = BroadcastPair(at + r * 64 + q * 4);
      for (int j = 0; j < NR; ++j) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], x, wv[j]);
    }
  }
}

// MR rows (A rows 64 bytes apart inside their 16-row tile block, at `a`) ×
// NR panels (panel_bytes apart, at `w`), over all kb_count tiles of K.
// `width` = valid columns of the last panel. `next_a` (or null): the next
// row block's A, pulled into L2 one k tile per step of this block's k loop.
template <int MR, int NR>
LLMSERVE_AVX512BF16 void Block(const uint8_t* a, const uint8_t* w, size_t panel_bytes,
                               size_t kb_count, float* y, size_t ldy, size_t width, const uint8_t* next_a) {
  __m512 acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = _mm512_setzero_ps();
  for (size_t kb = 0; kb < kb_count; ++kb) {
    if (next_a != nullptr) {
      for (int r = 0; r < MR; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(next_a + kb * kTileBytes + r * 64), _MM_HINT_T1);
      }
    }
    AccumulateTile<MR, NR>(acc, a + kb * kTileBytes, w + kb * kTileBytes, panel_bytes, nullptr);
  }
  StoreRows<MR, NR>(acc, y, ldy, width);
}

// Block over k tiles [kb_begin, kb_end) only, for the K-sliced decode loop
// (see SlicedGemm): the sums start from zero (kb_begin == 0) or from `park`,
// and end in `park` or, after the last slice (`last`), in y. Parking is an
// exact fp32 store and reload, so each lane still sees one vdpbf16ps per k
// pair in order. `next_w` (or null): the panels' next slice, pulled into L1
// one line per panel and k pair while this block computes.
template <int MR, int NR>
LLMSERVE_AVX512BF16 void SliceBlock(const uint8_t* a, const uint8_t* w, size_t panel_bytes, size_t kb_begin,
                                    size_t kb_end, bool last, float* park, float* y, size_t ldy, size_t width,
                                    const uint8_t* next_w) {
  __m512 acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = kb_begin == 0 ? _mm512_setzero_ps() : _mm512_load_ps(park + (r * NR + j) * 16);
  for (size_t kb = kb_begin; kb < kb_end; ++kb) {
    AccumulateTile<MR, NR>(acc, a + kb * kTileBytes, w + kb * kTileBytes, panel_bytes,
                           next_w == nullptr ? nullptr : next_w + (kb - kb_begin) * kTileBytes);
  }
  if (!last) {
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) _mm512_store_ps(park + (r * NR + j) * 16, acc[r][j]);
    return;
  }
  StoreRows<MR, NR>(acc, y, ldy, width);
}

using BlockFn = void (*)(const uint8_t*, const uint8_t*, size_t, size_t, float*, size_t, size_t, const uint8_t*);

template <int MR, size_t... NRm1>
constexpr auto RowOfBlocks(std::index_sequence<NRm1...>) {
  return std::array<BlockFn, kMaxPanels>{&Block<MR, static_cast<int>(NRm1) + 1>...};
}

template <size_t... MRm1>
constexpr auto TableOfBlocks(std::index_sequence<MRm1...>) {
  return std::array<std::array<BlockFn, kMaxPanels>, kMaxRows>{
      RowOfBlocks<static_cast<int>(MRm1) + 1>(std::make_index_sequence<kMaxPanels>())...};
}

// kBlocks[mr - 1][nr - 1]
constexpr auto kBlocks = TableOfBlocks(std::make_index_sequence<kMaxRows>());

// The K-sliced loop's blocks: kSliceBlocks[mr - 1][nr - 1], nr <= kSlicePanels.
constexpr int kSlicePanels = 3;
using SliceBlockFn = void (*)(const uint8_t*, const uint8_t*, size_t, size_t, size_t, bool, float*, float*, size_t,
                              size_t, const uint8_t*);

template <int MR, size_t... NRm1>
constexpr auto RowOfSliceBlocks(std::index_sequence<NRm1...>) {
  return std::array<SliceBlockFn, kSlicePanels>{&SliceBlock<MR, static_cast<int>(NRm1) + 1>...};
}

template <size_t... MRm1>
constexpr auto TableOfSliceBlocks(std::index_sequence<MRm1...>) {
  return std::array<std::array<SliceBlockFn, kSlicePanels>, kMaxRows>{
      RowOfSliceBlocks<static_cast<int>(MRm1) + 1>(std::make_index_sequence<kSlicePanels>())...};
}

constexpr auto kSliceBlocks = TableOfSliceBlocks(std::make_index_sequence<kMaxRows>());

// Decode batches of kSlicedMinRows <= m <= kSlicedMaxRows walk K in slices
// of kSliceTiles k tiles, every row block per slice. Outside that range the
// slices measured no faster (m = 32) or slower (m = 9: the second row block
// is too short to cover its prefetches; figures:
// docs/perf/2026-11-25-zen5-k-sliced-decode.md).
constexpr size_t kSlicedMinRows = 12;
constexpr size_t kSlicedMaxRows = 24;
constexpr size_t kSliceTiles = 4;

// Panels per register block: as many as the registers left by the
// accumulators allow (rows × panels ≤ 24, plus the panels' weight vectors).
size_t PanelsFor(size_t m) {
  if (m <= 2) return 8;
  if (m <= 4) return 5;
  return 3;
}

// A decode batch of two or three row blocks. With the whole K per block, the
// first row block of a panel group waited on the weights from memory and
// the others re-read them from L2 with the memory idle: a cold GEMM took
// about the streaming time plus half the compute. Here each row block takes
// one slice of kSliceTiles k tiles in turn, the sums parked between slices:
// the slice's weights (12 KiB for three panels) stay in L1 for the later row
// blocks, and the second row block pulls the next slice in while it
// computes, so the memory is busy throughout. (Slicing without that
// prefetch was no faster.) It pays only where the compute keeps up with the
// streaming (PreferredDecodeLoop; figures:
// docs/perf/2026-11-25-zen5-k-sliced-decode.md,
// docs/perf/2026-11-25-zen4-decode-loop.md).
void SlicedGemm(const uint8_t* ab, size_t m, size_t kb_count, const uint8_t* wb, size_t panel_bytes, size_t n, float* y,
                size_t ldy, size_t panel_begin, size_t panel_end) {
  alignas(64) float park[(kSlicedMaxRows + kMaxRows - 1) / kMaxRows][kMaxRows * kSlicePanels * 16];
  for (size_t panel = panel_begin; panel < panel_end; panel += kSlicePanels) {
    const size_t nr = panel_end - panel < kSlicePanels ? panel_end - panel : kSlicePanels;
    const size_t last_col = (panel + nr - 1) * 16;
    const size_t width = n - last_col < 16 ? n - last_col : 16;
    const uint8_t* wp = wb + panel * panel_bytes;
    for (size_t kb0 = 0; kb0 < kb_count; kb0 += kSliceTiles) {
      const size_t kb1 = kb0 + kSliceTiles < kb_count ? kb0 + kSliceTiles : kb_count;
      const bool last = kb1 == kb_count;
      for (size_t i = 0; i < m; i += kMaxRows) {
        const size_t mr = m - i < kMaxRows ? m - i : kMaxRows;
        const uint8_t* ap = ab + (i / 16) * kb_count * kTileBytes + (i % 16) * 64;
        // A hint: past the panels' end it names memory nothing reads.
        const uint8_t* next_w = i == kMaxRows && !last ? wp + kb1 * kTileBytes : nullptr;
        kSliceBlocks[mr - 1][nr - 1](ap, wp, panel_bytes, kb0, kb1, last, park[i / kMaxRows], y + i * ldy + panel * 16,
                                     ldy, width, next_w);
      }
    }
  }
}

}  // namespace

DecodeLoop PreferredDecodeLoop() {
  static const DecodeLoop loop =
      GetCpuFeatures().l1d_bytes >= 48 * 1024 ? DecodeLoop::kKSliced : DecodeLoop::kWholeK;
  return loop;
}

void Gemm(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
          size_t ldy, size_t panel_begin, size_t panel_end, DecodeLoop decode_loop) {
  const size_t kb_count = kpad / 32;
  const size_t panel_bytes = kpad * 16 * 2;
  const auto* wb = reinterpret_cast<const uint8_t*>(w);
  const auto* ab = reinterpret_cast<const uint8_t*>(a);
  if (decode_loop == DecodeLoop::kKSliced && m >= kSlicedMinRows && m <= kSlicedMaxRows) {
    SlicedGemm(ab, m, kb_count, wb, panel_bytes, n, y, ldy, panel_begin, panel_end);
    return;
  }
  const size_t nr_max = PanelsFor(m);
  // A panel group's weights stay in L2 while every row block passes over them.
  for (size_t panel = panel_begin; panel < panel_end; panel += nr_max) {
    const size_t nr = panel_end - panel < nr_max ? panel_end - panel : nr_max;
    const size_t last_col = (panel + nr - 1) * 16;
    const size_t width = n - last_col < 16 ? n - last_col : 16;
    for (size_t i = 0; i < m; i += kMaxRows) {
      // Row blocks never straddle a 16-row tile block (kMaxRows divides 16).
      const size_t mr = m - i < kMaxRows ? m - i : kMaxRows;
      const uint8_t* ap = ab + (i / 16) * kb_count * kTileBytes + (i % 16) * 64;
      // Beyond one tile block the hardware prefetcher does not keep up with
      // A's 512-byte runs 1 KiB apart, and the long-K prefill matmuls (o,
      // down) waited on A without this hint (figures:
      // docs/perf/2026-11-25-zen5-fused-producers.md).
      const size_t next = i + kMaxRows;
      const uint8_t* next_a =
          m > 16 && next < m ? ab + (next / 16) * kb_count * kTileBytes + (next % 16) * 64 : nullptr;
      kBlocks[mr - 1][nr - 1](ap, wb + panel * panel_bytes, panel_bytes, kb_count, y + i * ldy + panel * 16,
                              ldy, width, next_a);
    }
  }
}

namespace {

// fp32 with denormals flushed to (signed) zero, as vdpbf16ps treats its
// inputs and results.
float FlushDenormal(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
  std::memcpy(&v, &u, 4);
  return v;
}

float Bf16Bits(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return FlushDenormal(f);
}

}  // namespace

void GemmReference(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
                   size_t ldy) {
  const size_t kb_count = kpad / 32;
  for (size_t i = 0; i < m; ++i) {
    for (size_t col = 0; col < n; ++col) {
      const uint16_t* arow = a + (i / 16) * kb_count * 512 + (i % 16) * 32;
      const uint16_t* wpanel = w + (col / 16) * kpad * 16 + (col % 16) * 2;
      float acc = 0.f;
      for (size_t q = 0; q < kpad / 2; ++q) {
        const uint16_t* x = arow + (q / 16) * 512 + (q % 16) * 2;
        const uint16_t* v = wpanel + (q / 16) * 512 + (q % 16) * 32;
        // Products of bf16 values are exact in fp32; each sum rounds.
        acc = FlushDenormal(acc + Bf16Bits(x[1]) * Bf16Bits(v[1]));
        acc = FlushDenormal(acc + Bf16Bits(x[0]) * Bf16Bits(v[0]));
      }
      y[i * ldy + col] = acc;
    }
  }
}

LLMSERVE_AVX512BF16 float Dpbf16PeakLoop(size_t iterations) {
  __m512 acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512bh x = reinterpret_cast<__m512bh>(_mm512_set1_epi32(0x3f803f80));  // (1, 1)
  const __m512bh v = x;
  for (size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], x, v);
  }
  __m512 total = acc[0];
  for (int i = 1; i < 24; ++i) total = _mm512_add_ps(total, acc[i]);
  return _mm512_reduce_add_ps(total);
}

}  // namespace llmserve::kernels::cpu::dpbf16
