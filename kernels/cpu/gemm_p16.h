#pragma once
// "P16" weight layout and the fp32-FMA kernels that read it (MatmulPrecision::kF32,
// and kBF16 on CPUs without AMX).
//
// Layout: output features in panels of 16; panel p stores, for k = 0..K-1 in
// order, the 16 weights W[16p + j][k] (j = 0..15) next to each other, zero
// where 16p + j >= rows. Elements keep their storage type (f32, bf16, f16).
//
// Every kernel computes each output element as
//   acc = 0; for k = 0..K-1: acc = fma(x[k], w[k], acc)
// (one fused multiply-add per k, in index order). That fixes the result
// bit for bit, so the scalar, AVX2 and AVX-512 kernels agree exactly with each
// other and with themselves for any m, row blocking or thread split.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/linear.h"

namespace llmserve::kernels::cpu::p16 {

// Bytes of the packed form of a rows × cols weight stored as `dtype`.
size_t PackedBytes(size_t rows, size_t cols, WeightDType dtype);

// Packs a row-major [rows × cols] block (row stride `row_stride` elements) of
// `src` (type src_dtype) into `dst` (PackedBytes(rows, cols, dst_dtype) bytes),
// converting to dst_dtype: the same type, or kBF16 (round to nearest even).
void Pack(const void* src, WeightDType src_dtype, size_t rows, size_t cols, size_t row_stride,
          WeightDType dst_dtype, uint8_t* dst);

// One matmul over a range of panels: y[i][16p + j] for i < m, panels p in
// [panel_begin, panel_end), j with 16p + j < n.
struct Problem {
  const float* x;      // [m × k], row stride ldx
  size_t m, ldx;
  const uint8_t* w;    // packed panels
  WeightDType dtype;   // element type of w
  size_t k, n;         // in_features, out_features
  float* y;            // [m × n], row stride ldy
  size_t ldy;
};

void GemmScalar(const Problem& p, size_t panel_begin, size_t panel_end);
// Requires Isa::kAvx2 or better.
void GemmAvx2(const Problem& p, size_t panel_begin, size_t panel_end);
// Requires Isa::kAvx512 or better.
void GemmAvx512(const Problem& p, size_t panel_begin, size_t panel_end);

}  // namespace llmserve::kernels::cpu::p16
