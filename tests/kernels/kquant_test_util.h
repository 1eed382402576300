#pragma once
// What the K-quant kernel tests share: random activations and one row quantized
// as Q8_K by the scalar quantizer (gemm_q4k.h).
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/gemm_q4k.h"

namespace llmserve::kernels::cpu::kquant_test_util {

inline std::vector<float> RandomActivations(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

struct QuantizedRow {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int16_t> sums;
};

inline QuantizedRow Quantize(const float* x, size_t cols) {
  QuantizedRow row{std::vector<int8_t>(cols), std::vector<float>(cols / 256), std::vector<int16_t>(cols / 16)};
  q4k::QuantizeRow(x, cols, row.q.data(), row.d.data(), row.sums.data());
  return row;
}

}  // namespace llmserve::kernels::cpu::kquant_test_util
