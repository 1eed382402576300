#include "kernels/cpu/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace llmserve::kernels::cpu {
namespace {

TEST(Rope, DefaultFrequenciesAndRotation) {
  RopeScaling none;
  auto f = ComputeRopeFrequencies(8, 10000.0, none);
  ASSERT_EQ(f.inv_freq.size(), 4u);
  EXPECT_FLOAT_EQ(f.inv_freq[0], 1.0f);
  EXPECT_NEAR(f.inv_freq[1], std::pow(10000.0, -0.25), 1e-7);
  // Position 0 is the identity; position p rotates pair (i, i+4) by p * inv_freq[i].
  std::vector<float> head = {1, 2, 3, 4, 5, 6, 7, 8};
  auto h0 = head;
  ApplyRopeReference(h0.data(), 8, f, 0);
  EXPECT_EQ(h0, head);
  auto h1 = head;
  ApplyRopeReference(h1.data(), 8, f, 3);
  EXPECT_NEAR(h1[0], 1 * std::cos(3.0) - 5 * std::sin(3.0), 1e-5);
  EXPECT_NEAR(h1[4], 5 * std::cos(3.0) + 1 * std::sin(3.0), 1e-5);
}

TEST(Rope, ScalingVariants) {
  RopeScaling lin;
  lin.type = RopeScaling::Type::kLinear;
  lin.factor = 4;
  auto base = ComputeRopeFrequencies(64, 500000.0, RopeScaling());
  auto l = ComputeRopeFrequencies(64, 500000.0, lin);
  for (size_t i = 0; i < 32; ++i) EXPECT_NEAR(l.inv_freq[i], base.inv_freq[i] / 4, 1e-12);
  RopeScaling ll;  // llama3: high frequencies kept, low ones divided by factor
  ll.type = RopeScaling::Type::kLlama3;
  ll.factor = 8;
  ll.original_max_position = 8192;
  auto l3 = ComputeRopeFrequencies(64, 500000.0, ll);
  EXPECT_FLOAT_EQ(l3.inv_freq[0], base.inv_freq[0]);
  EXPECT_NEAR(l3.inv_freq[31], base.inv_freq[31] / 8, 1e-12);
  RopeScaling y;  // yarn: attention scaling 0.1 ln(factor) + 1
  y.type = RopeScaling::Type::kYarn;
  y.factor = 4;
  y.original_max_position = 4096;
  auto yf = ComputeRopeFrequencies(64, 10000.0, y);
  EXPECT_NEAR(yf.attention_scaling, 0.1 * std::log(4.0) + 1, 1e-6);
  EXPECT_FLOAT_EQ(yf.inv_freq[0], ComputeRopeFrequencies(64, 10000.0, RopeScaling()).inv_freq[0]);
}

TEST(Rope, KernelMatchesReference) {
  RopeScaling none;
  auto f = ComputeRopeFrequencies(16, 10000.0, none);
  const size_t tokens = 5, heads = 3, hd = 16, stride = heads * hd + 7;
  std::mt19937 rng(1);
  std::normal_distribution<float> d;
  std::vector<float> x(tokens * stride);
  for (auto& v : x) v = d(rng);
  std::vector<int32_t> pos = {0, 7, 100, 3, 4095};
  auto ref = x;
  for (size_t t = 0; t < tokens; ++t) {
    for (size_t h = 0; h < heads; ++h) ApplyRopeReference(&ref[t * stride + h * hd], hd, f, pos[t]);
  }
  RopeTable table;
  BuildRopeTable(f, pos.data(), tokens, &table);
  ThreadPool pool(2);
  ApplyRope(x.data(), tokens, stride, heads, hd, table, pool);
  EXPECT_EQ(x, ref);
}

}  // namespace
}  // namespace llmserve::kernels::cpu
