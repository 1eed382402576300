#pragma once
// Int8 weights with one scale per output row ("per-channel"), as
// compressed-tensors W8A8 checkpoints store them and as --quantization int8
// makes them from float weights at load.

#include <cstddef>
#include <cstdint>

namespace llmserve::worker {

// Symmetric per-row quantization: a row's scale is max_c |w[c]| / 127 and
// q = w / scale rounded to nearest even (both in f32); a row of zeros gets
// scale 0 and zero quants.
float Int8RowScale(const float* row, size_t cols);
void QuantizeRowInt8(const float* row, size_t cols, float scale, int8_t* q);
// Both for rows × cols f32 weights (contiguous).
void QuantizeRowsInt8(const float* w, size_t rows, size_t cols, int8_t* q, float* scales);

// w[r][c] = float(q[r][c]) × scale[r] in f32: the exactly dequantized weights
// (rows × cols, contiguous) of int8 rows `row_stride` apart.
void DequantizeRowsInt8(const int8_t* q, size_t rows, size_t cols, size_t row_stride, const float* scales,
                        float* w);

}  // namespace llmserve::worker
