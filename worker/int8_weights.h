#pragma once
// Int8 weights with one scale per output row ("per-channel"), as
// compressed-tensors W8A8 checkpoints store them and as --quantization int8
// makes them from float weights at load.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmserve::worker {

// Int8 weights with one scale per row and group of `group` columns:
// w[r][c] = scales[r × groups + c / group] × q[r][c]. Per-channel int8 is one
// group per row; 4-bit group quantization is widened to this at load.
struct Int8Groups {
  size_t rows = 0, cols = 0, group = 0;
  std::vector<int8_t> q;      // rows × cols
  std::vector<float> scales;  // rows × groups
  // Empty: the columns are the checkpoint's. Else column c holds checkpoint
  // column input_order[c] (GPTQ act-order: columns sorted by their group, so
  // that each group is contiguous).
  std::vector<uint32_t> input_order;
  size_t groups() const { return (cols + group - 1) / group; }
};

// Symmetric per-row quantization: a row's scale is max_c |w[c]| / 127 and
// q = w / scale rounded to nearest even (both in f32); a row of zeros gets
// scale 0 and zero quants.
float Int8RowScale(const float* row, size_t cols);
void QuantizeRowInt8(const float* row, size_t cols, float scale, int8_t* q);
// Both for rows × cols f32 weights (contiguous).
void QuantizeRowsInt8(const float* w, size_t rows, size_t cols, int8_t* q, float* scales);

// float(q) × its scale in f32: the exactly dequantized weights (rows × cols),
// in the checkpoint's column order.
std::vector<float> Dequantize(const Int8Groups& w);

// Each row's scale per block of 32 columns (rows × cols / 32), what
// LinearWeight::PackInt8 takes; requires group and cols multiples of 32.
std::vector<float> BlockScales(const Int8Groups& w);

}  // namespace llmserve::worker
