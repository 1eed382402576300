#pragma once
// Q4_K and Q5_K weights kept 4- and 5-bit, and the integer matmul that reads
// them.
//
// A GGUF Q4_K block covers 256 consecutive weights of a row: f16 d and dmin,
// eight sub-blocks of 32 with 6-bit scale sc_s and min m_s, and 4-bit quants
// q (w = d·sc_s·q − dmin·m_s). A Q5_K block is the same with a fifth bit per
// quant (q = nibble + 16·bit, 0..31): bit s of byte c of its 32 qh bytes
// belongs to quant 32s + c. Activations are quantized per row and block
// of 256 as llama.cpp's Q8_K does for its Q4_K dot product: with xmax the
// first element of largest |x|, iscale = −127 / xmax (f32), qx = min(127,
// round_half_even(iscale × x)), dx = 1 / iscale (f32, not rounded to f16),
// and the per-16 sums of qx (int16) for the min term.
//
// Every kernel computes output (i, r) as
//   acc = 0; for each block b in order:
//     isum = Σ_s sc_s · Σ_{c in s} qw·qx          (int32, exact)
//     msum = Σ_s m_s · (sum16[2s] + sum16[2s+1])  (int32, exact)
//     acc = fma(float(isum), dw × dx, acc)
//     acc = fma(−float(msum), dmin × dx, acc)
// The integer sums are exact, so the scalar and AVX2 kernels agree bit for
// bit, and a row's result does not depend on m or on the other rows.
//
// Layout: output rows in groups of 8; group g's blocks follow each other,
// block b of group g at (g × blocks + b) × kGroupBlockBytes (a multiple of 64),
// its parts in the order the AVX2 kernel reads them:
//   scales  [8 rows][8]     sc_s, uint8
//   quants  [8 rows][128]   as in the file: bytes 32i..32i+31 hold sub-block
//                           2i in the low nibbles, 2i+1 in the high ones
//   qh      [8 rows][32]    Q5_K only: the fifth bits, as in the file
//   mins    [4][8 rows][2]  (m_2p, m_2p+1) for sub-block pair p, uint8
//   d, dmin [8 rows] each   f32
// Rows past the end are zero.

#include <cstddef>
#include <cstdint>

namespace llmserve::kernels::cpu::q4k {

inline constexpr size_t kBlock = 256;         // weights per Q4_K block
inline constexpr size_t kBlockBytes = 144;    // its size in a GGUF file
inline constexpr size_t kSubBlocks = 8;       // of 32 weights each
inline constexpr size_t kSums = kBlock / 16;  // activation sums per block
inline constexpr size_t kGroupRows = 8;       // output rows per group

inline constexpr size_t kQ5BlockBytes = 176;  // a Q5_K block in a GGUF file

enum class Format { kQ4_K, kQ5_K };

// Offsets inside one packed group block of a format.
struct Layout {
  size_t scales_at, quants_at, qh_at, mins_at, d_at, dmin_at, group_block_bytes;
};
constexpr Layout LayoutOf(Format f) {
  const size_t quants_at = kGroupRows * kSubBlocks;                     // 64
  const size_t qh_at = quants_at + kGroupRows * kBlock / 2;             // 1088
  const size_t mins_at = qh_at + (f == Format::kQ5_K ? kGroupRows * 32 : 0);
  const size_t d_at = mins_at + kGroupRows * kSubBlocks;
  const size_t dmin_at = d_at + kGroupRows * sizeof(float);
  return {0, quants_at, qh_at, mins_at, d_at, dmin_at, dmin_at + kGroupRows * sizeof(float)};
}
static_assert(LayoutOf(Format::kQ4_K).group_block_bytes == 1216);
static_assert(LayoutOf(Format::kQ5_K).group_block_bytes == 1472);
static_assert(LayoutOf(Format::kQ4_K).group_block_bytes % 64 == 0);
static_assert(LayoutOf(Format::kQ5_K).group_block_bytes % 64 == 0);

// Bytes of the packed form of rows × cols (cols a multiple of 256).
size_t PackedBytes(Format f, size_t rows, size_t cols);

// Packs rows × cols weights given as GGUF blocks of format f, `row_stride`
// weights apart (a multiple of 256; `src` points at the first block of the
// first row).
void Pack(Format f, const uint8_t* src, size_t rows, size_t cols, size_t row_stride, uint8_t* dst);

// Quantizes one row of `cols` activations (a multiple of 256) into `q` (cols
// int8), `d` (cols / 256 scales) and `sums` (cols / 16 per-16 sums of q).
void QuantizeRow(const float* x, size_t cols, int8_t* q, float* d, int16_t* sums);
// The same bits with AVX2 (requires Isa::kAvx2 or better).
void QuantizeRowAvx2(const float* x, size_t cols, int8_t* q, float* d, int16_t* sums);
// sums[t] = Σ q[16t .. 16t + 15] for t < n / 16.
void SumsOf16(const int8_t* q, size_t n, int16_t* sums);

// One matmul over a range of row groups: y[i][8g + j] for i < m, groups g in
// [group_begin, group_end), 8g + j < n.
struct Problem {
  const int8_t* xq;     // [m × k] quantized activations
  const float* xd;      // [m × k / 256] their scales
  const int16_t* xsum;  // [m × k / 16] their per-16 sums
  size_t m, k;          // rows, in_features
  const uint8_t* w;     // packed weights
  Format format;        // of w
  size_t n;             // out_features
  float* y;             // [m × n], row stride ldy
  size_t ldy;
};

void GemmScalar(const Problem& p, size_t group_begin, size_t group_end);
// Requires Isa::kAvx2 or better.
void GemmAvx2(const Problem& p, size_t group_begin, size_t group_end);

// The VNNI kernel's order of a packed weight's bytes (in place, at pack
// time), so that one 32-byte load holds 4 consecutive quants of each of a
// group's 8 rows, what one vpdpbusd multiplies with 4 activations:
//   scales  [8 sub-blocks][8 rows]
//   quants  [4 pairs p][8 chunks t][8 rows][4 bytes]: bytes 32p + 4t..4t+3
//           of the row (sub-block 2p low nibbles, 2p+1 high)
//   qh      [8 chunks t][8 rows][4 bytes]: qh bytes 4t..4t+3 of the row
// mins, d and dmin stay where they are.
void InterleaveForVnni(Format f, uint8_t* packed, size_t rows, size_t cols);
// Reads InterleaveForVnni's order. Requires Isa::kAvx512 and
// CpuFeatures::avx512_vnni.
void GemmVnni(const Problem& p, size_t group_begin, size_t group_end);

}  // namespace llmserve::kernels::cpu::q4k
