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

void DequantizeRowsInt8(const int8_t* q, size_t rows, size_t cols, size_t row_stride, const float* scales,
                        float* w) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) w[r * cols + c] = static_cast<float>(q[r * row_stride + c]) * scales[r];
  }
}

}  // namespace llmserve::worker
