#pragma once
// Q6_K weights kept 6-bit, and the integer matmul that reads them.
//
// A GGUF Q6_K block covers 256 consecutive weights of a row: 128 bytes ql of
// low nibbles, 64 bytes qh of top bit pairs, 16 int8 scales sc_s (one per 16
// weights) and f16 d; w = d·sc_s·(q − 32) with q in 0..63. In each half of 128
// weights (ql += 64, qh += 32), weight 32t + l (t = 0..3, l = 0..31) takes
// its low 4 bits from the low (t < 2) or high nibble of ql[l + 32·(t % 2)]
// and its top 2 bits from bits 2t, 2t+1 of qh[l].
//
// Activations are quantized as for Q4_K (q4k::QuantizeRow, llama.cpp's Q8_K),
// and every kernel computes output (i, r) as
//   acc = 0; for each block b in order:
//     isum = Σ_s sc_s · (Σ_{c in s} q·qx − 32 · sum16[s])   (int32, exact)
//     acc = fma(float(isum), dw × dx, acc)
// so the scalar and AVX2 kernels agree bit for bit, and a row's result does
// not depend on m or on the other rows.
//
// Layout: output rows in groups of 8; group g's blocks follow each other,
// block b of group g at (g × blocks + b) × kGroupBlockBytes (a multiple of 64):
//   scales  [8 rows][16]   sc_s, int8
//   ql      [8 rows][128]  as in the file
//   qh      [8 rows][64]   as in the file
//   d       [8 rows]       f32
//   (padding to 64 bytes)
// Rows past the end are zero.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/gemm_q4k.h"

namespace llmserve::kernels::cpu::q6k {

using q4k::kBlock;
using q4k::kGroupRows;
using q4k::kSums;
using Problem = q4k::Problem;  // its format field is not read

inline constexpr size_t kBlockBytes = 210;  // a Q6_K block in a GGUF file
inline constexpr size_t kSubBlocks = 16;    // of 16 weights each

inline constexpr size_t kScalesAt = 0;
inline constexpr size_t kQlAt = kScalesAt + kGroupRows * kSubBlocks;  // 128
inline constexpr size_t kQhAt = kQlAt + kGroupRows * kBlock / 2;      // 1152
inline constexpr size_t kDAt = kQhAt + kGroupRows * kBlock / 4;       // 1664
inline constexpr size_t kGroupBlockBytes = (kDAt + kGroupRows * sizeof(float) + 63) / 64 * 64;  // 1728

// Bytes of the packed form of rows × cols (cols a multiple of 256).
size_t PackedBytes(size_t rows, size_t cols);

// Packs rows × cols weights given as GGUF Q6_K blocks, `row_stride` weights
// apart (a multiple of 256; `src` points at the first block of the first row).
void Pack(const uint8_t* src, size_t rows, size_t cols, size_t row_stride, uint8_t* dst);

void GemmScalar(const Problem& p, size_t group_begin, size_t group_end);
// Requires Isa::kAvx2 or better.
void GemmAvx2(const Problem& p, size_t group_begin, size_t group_end);

// The VNNI kernel's order of a packed weight's bytes (in place, at pack
// time), so that one 32-byte load holds 4 consecutive bytes of each of a
// group's 8 rows, what one vpdpbusd multiplies with 4 activations:
//   scales  [16 sub-blocks][8 rows]
//   ql      [2 halves h][2 parts a][8 chunks u][8 rows][4 bytes]: ql bytes
//           64h + 32a + 4u..4u+3 of the row
//   qh      [2 halves h][8 chunks u][8 rows][4 bytes]: qh bytes 32h + 4u..
// d stays where it is.
void InterleaveForVnni(uint8_t* packed, size_t rows, size_t cols);
// Reads InterleaveForVnni's order. Requires Isa::kAvx512 and
// CpuFeatures::avx512_vnni.
void GemmVnni(const Problem& p, size_t group_begin, size_t group_end);

}  // namespace llmserve::kernels::cpu::q6k
