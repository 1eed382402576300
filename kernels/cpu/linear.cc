#include "kernels/cpu/linear.h"

#include <glog/logging.h>

#include <cstring>

namespace llmserve::kernels::cpu {

float Bf16ToF32(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float F16ToF32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ff;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      u = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t F32ToBf16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

namespace {
size_t ElementSize(WeightDType dtype) { return dtype == WeightDType::kF32 ? 4 : 2; }

float LoadWeight(const uint8_t* base, WeightDType dtype, size_t index) {
  switch (dtype) {
    case WeightDType::kF32: {
      float f;
      std::memcpy(&f, base + index * 4, 4);
      return f;
    }
    case WeightDType::kBF16: {
      uint16_t b;
      std::memcpy(&b, base + index * 2, 2);
      return Bf16ToF32(b);
    }
    case WeightDType::kF16: {
      uint16_t b;
      std::memcpy(&b, base + index * 2, 2);
      return F16ToF32(b);
    }
  }
  return 0.f;
}
}  // namespace

void LinearReference(const float* x, size_t m, const void* w, WeightDType dtype, size_t rows,
                     size_t cols, float* y) {
  const auto* base = static_cast<const uint8_t*>(w);
  for (size_t i = 0; i < m; ++i) {
    for (size_t r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (size_t c = 0; c < cols; ++c) acc += x[i * cols + c] * LoadWeight(base, dtype, r * cols + c);
      y[i * rows + r] = acc;
    }
  }
}

LinearWeight LinearWeight::Pack(const void* data, WeightDType dtype, size_t rows, size_t cols,
                                size_t row_stride, MatmulPrecision precision) {
  CHECK_GE(row_stride, cols);
  LinearWeight w;
  w.rows_ = rows;
  w.cols_ = cols;
  w.dtype_ = dtype;
  w.precision_ = precision;
  const size_t es = ElementSize(dtype);
  w.data_.resize(rows * cols * es);
  const auto* src = static_cast<const uint8_t*>(data);
  for (size_t r = 0; r < rows; ++r) std::memcpy(&w.data_[r * cols * es], src + r * row_stride * es, cols * es);
  return w;
}

void LinearWeight::Apply(const float* x, size_t m, float* y, ThreadPool& pool) const {
  // Split output features across threads; each output element is reduced in
  // index order by one thread, so results do not depend on m or the split.
  pool.ParallelFor(rows_, 16, [&](size_t begin, size_t end, size_t) {
    for (size_t i = 0; i < m; ++i) {
      for (size_t r = begin; r < end; ++r) {
        float acc = 0.f;
        for (size_t c = 0; c < cols_; ++c) acc += x[i * cols_ + c] * LoadWeight(data_.data(), dtype_, r * cols_ + c);
        y[i * rows_ + r] = acc;
      }
    }
  });
}

}  // namespace llmserve::kernels::cpu
