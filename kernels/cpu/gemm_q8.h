#pragma once
// Q8_0 weights kept quantized, and the int8 matmul that reads them.
//
// A GGUF Q8_0 block holds 32 consecutive weights of a row as int8 and one f16
// scale d (w = d × q). Activations are quantized the same way per row and
// block of 32 (as llama.cpp does for its Q8_0 dot products): dx = max|x| /
// 127, rounded to f16 as llama.cpp stores it; q = round(x / dx), computed as
// x × (1 / dx) with the unrounded dx, ties away from zero.
//
// Every kernel computes output (i, r) as
//   acc = 0; for each block b in order: acc = fma(float(Σ qx·qw), dw × dx, acc)
// The integer sums are exact, so the scalar, AVX2 and VNNI kernels agree bit
// for bit, and a row's result does not depend on the other rows of the batch.
//
// Layout: output rows in groups of 8. Group g stores, for each block b, the 8
// rows' 32 quants (256 bytes, row j at 32 j); after every group's quants come
// the scales as f32, [group][block][8]. Rows past the end are zero.

#include <cstddef>
#include <cstdint>

namespace llmserve::kernels::cpu::q8 {

inline constexpr size_t kBlock = 32;          // weights per Q8_0 block
inline constexpr size_t kBlockBytes = 34;     // its size in a GGUF file: f16 scale, 32 int8
inline constexpr size_t kGroupRows = 8;       // output rows per group

// Bytes of the packed form of rows × cols (cols a multiple of 32).
size_t PackedBytes(size_t rows, size_t cols);

// Packs rows × cols weights given as GGUF Q8_0 blocks, `row_stride` weights
// apart (a multiple of 32; `src` points at the first block of the first row).
// Returns whether a quant is -128 (llama.cpp's quantizer writes ±127 at
// most; the AVX2 kernel then takes a slower path that is exact for it).
bool Pack(const uint8_t* src, size_t rows, size_t cols, size_t row_stride, uint8_t* dst);

// Packs rows × cols int8 weights, `row_stride` apart, with one f32 scale per
// row and block of 32 (block_scales[r × cols / 32 + b]). Returns whether a
// quant is -128, as Pack does.
bool PackInt8(const int8_t* q, const float* block_scales, size_t rows, size_t cols, size_t row_stride,
              uint8_t* dst);

// Quantizes one row of `cols` activations (a multiple of 32) into `q` (cols
// int8) and `d` (cols / 32 scales).
void QuantizeRow(const float* x, size_t cols, int8_t* q, float* d);

// One matmul over a range of row groups: y[i][8g + j] for i < m, groups g in
// [group_begin, group_end), 8g + j < n.
struct Problem {
  const int8_t* xq;   // [m × k] quantized activations
  const float* xd;    // [m × k / 32] their scales
  size_t m, k;        // rows, in_features
  const uint8_t* w;   // packed weights
  bool has_min_quant; // Pack found a -128
  size_t n;           // out_features
  float* y;           // [m × n], row stride ldy
  size_t ldy;
};

void GemmScalar(const Problem& p, size_t group_begin, size_t group_end);
// Requires Isa::kAvx2 or better.
void GemmAvx2(const Problem& p, size_t group_begin, size_t group_end);
// Requires Isa::kAvx512 and CpuFeatures::avx512_vnni, and weights that went
// through InterleaveForVnni after packing.
void GemmVnni(const Problem& p, size_t group_begin, size_t group_end);

// Reorders packed weights (Pack / PackInt8) for GemmVnni: within each group's
// block, byte 4t + u of row j moves to 32t + 4j + u. Scales stay.
void InterleaveForVnni(uint8_t* packed, size_t rows, size_t cols);

}  // namespace llmserve::kernels::cpu::q8
