#pragma once
// AMX bf16 GEMM (MatmulPrecision::kBF16 on CPUs with AMX): activations are
// rounded to bf16, products accumulate in fp32 tiles.
//
// Weight layout: output features in panels of 16; panel p is KB = ceil(K/32)
// tiles of 1 KiB in k order; row q (0..15) of tile kb holds, for n = 0..15,
// the pair W[16p + n][32kb + 2q], W[16p + n][32kb + 2q + 1] (the VNNI layout
// tdpbf16ps wants for its B operand). Padding (n or k out of range) is zero.
//
// Activation layout ("tiled A"): rows in blocks of 16; block rb is KB tiles
// of 1 KiB in k order; row r (0..15) of tile kb holds x[16rb + r][32kb ..
// 32kb + 31] as bf16. Every A tile is contiguous, so tile loads never stride
// across pages (a row-major A with a 2 KiB row stride maps all 16 rows of a
// tile into two L1 sets).
//
// Determinism: each output element is the fp32 tile accumulator of one
// output row, zeroed, then updated by tdpbf16ps for kb = 0..KB-1 in order,
// whatever the number of rows in the tile (rows are configured to the rows
// present, 1..16) and whichever thread runs it. Large m runs K in blocks and
// parks the accumulators in memory between blocks: an fp32 store and reload
// is exact, so the sequence of operations on each element is the same as in
// one pass. So row i of y depends only on row i of x.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/linear.h"

namespace llmserve::kernels::cpu::amx {

// K rounded up to a whole tile (32).
inline size_t PaddedK(size_t cols) { return (cols + 31) / 32 * 32; }

// Bytes of the packed weight.
inline size_t PackedBytes(size_t rows, size_t cols) {
  return (rows + 15) / 16 * PaddedK(cols) * 16 * 2;
}

// Packs a row-major [rows × cols] block (row stride `row_stride` elements) of
// `src` (any dtype; f32/f16 are rounded to bf16) into `dst` (PackedBytes,
// 64-byte aligned). AVX-512 (16 × 16 transposes); requires Isa::kAvx512 or
// better.
void Pack(const void* src, WeightDType dtype, size_t rows, size_t cols, size_t row_stride,
          uint16_t* dst);

// Scalar reference of Pack (same bytes).
void PackReference(const void* src, WeightDType dtype, size_t rows, size_t cols, size_t row_stride,
                   uint16_t* dst);

// Bytes of the tiled A for m rows.
inline size_t TiledABytes(size_t m, size_t kpad) { return (m + 15) / 16 * 16 * kpad * 2; }

// Where row r's column 0 sits in the tiled A: tile row block r / 16, row
// r % 16 of its first tile.
inline uint16_t* TiledARow(uint16_t* a, size_t r, size_t kpad) { return a + (r / 16) * kpad * 16 + (r % 16) * 32; }
// Offset of column c from TiledARow: tile c / 32, element c % 32.
inline size_t TiledAColumn(size_t c) { return (c / 32) * 512 + c % 32; }

// Rounds rows [r0, r1) of x ([· × k], row stride ldx) to bf16 (nearest even,
// as F32ToBf16) into the tiled A `a` (TiledABytes(m, kpad)), zero-filling
// columns k..kpad-1. Requires Isa::kAvx512 or better.
void ConvertRows(const float* x, size_t ldx, size_t k, size_t r0, size_t r1, uint16_t* a,
                 size_t kpad);

// y[i][16p + j] for i < m and panels p in [panel_begin, panel_end), given the
// converted (tiled) activations a and packed weights w with n outputs.
// Requires Isa::kAmx.
void Gemm(const uint16_t* a, size_t m, size_t kpad, const uint16_t* w, size_t n, float* y,
          size_t ldy, size_t panel_begin, size_t panel_end);

}  // namespace llmserve::kernels::cpu::amx
