#include "worker/int8_weights.h"

#include <algorithm>
#include <cmath>

namespace llmserve::worker {

float Int8RowScale(const float* row, size_t cols) {
  float amax = 0.f;
  for (size_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(row[c]));
  return amax / 127.f;
}

void QuantizeRowInt8(const float* row, size_t cols, float scale, int8_t* q) {
  for (size_t c = 0; c < cols; ++c) {
    const float v = scale != 0.f ? std::nearbyint(row[c] / scale) : 0.f;
    q[c] = static_cast<int8_t>(std::clamp(v, -127.f, 127.f));
  }
}

void QuantizeRowsInt8(const float* w, size_t rows, size_t cols, int8_t* q, float* scales) {
  for (size_t r = 0; r < rows; ++r) {
    scales[r] = Int8RowScale(w + r * cols, cols);
    QuantizeRowInt8(w + r * cols, cols, scales[r], q + r * cols);
  }
}

std::vector<float> Dequantize(const Int8Groups& w) {
  std::vector<float> out(w.rows * w.cols);
  for (size_t r = 0; r < w.rows; ++r) {
    for (size_t c = 0; c < w.cols; ++c) {
      const size_t to = w.input_order.empty() ? c : w.input_order[c];
      out[r * w.cols + to] = static_cast<float>(w.q[r * w.cols + c]) * w.scales[r * w.groups() + c / w.group];
    }
  }
  return out;
}

std::vector<float> BlockScales(const Int8Groups& w) {
  constexpr size_t kBlock = 32;
  const size_t blocks = w.cols / kBlock;
  std::vector<float> out(w.rows * blocks);
  for (size_t r = 0; r < w.rows; ++r) {
    for (size_t b = 0; b < blocks; ++b) out[r * blocks + b] = w.scales[r * w.groups() + b * kBlock / w.group];
  }
  return out;
}

}  // namespace llmserve::worker
