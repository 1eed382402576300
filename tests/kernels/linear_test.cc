#include "kernels/cpu/linear.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace llmserve::kernels::cpu {
namespace {

TEST(Linear, Bf16RoundTripAndReferenceValues) {
  EXPECT_EQ(Bf16ToF32(F32ToBf16(1.5f)), 1.5f);
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000), -2.0f);
  // W = [[1, 2], [3, 4], [5, 6]], x = [1, -1] -> y = [-1, -1, -1].
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::vector<float> x = {1, -1, 2, 0.5f};
  std::vector<float> y(6);
  LinearReference(x.data(), 2, w.data(), WeightDType::kF32, 3, 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{-1, -1, -1, 3, 8, 13}));
}

TEST(Linear, ApplyMatchesReferenceAndIsBatchInvariant) {
  const size_t rows = 37, cols = 70;
  std::mt19937 rng(1);
  std::normal_distribution<float> dist;
  std::vector<uint16_t> w(rows * cols);
  for (auto& v : w) v = F32ToBf16(dist(rng));
  std::vector<float> x(5 * cols);
  for (auto& v : x) v = dist(rng);
  ThreadPool pool(2);
  auto lw = LinearWeight::Pack(w.data(), WeightDType::kBF16, rows, cols, cols, MatmulPrecision::kF32);
  std::vector<float> y(5 * rows), ref(5 * rows), one(rows);
  lw.Apply(x.data(), 5, y.data(), pool);
  LinearReference(x.data(), 5, w.data(), WeightDType::kBF16, rows, cols, ref.data());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], 1e-4f * (1 + std::abs(ref[i])));
  lw.Apply(x.data() + 3 * cols, 1, one.data(), pool);  // row 3 alone
  for (size_t r = 0; r < rows; ++r) EXPECT_EQ(one[r], y[3 * rows + r]) << r;
}

}  // namespace
}  // namespace llmserve::kernels::cpu
