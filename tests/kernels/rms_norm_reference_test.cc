#include "kernels/cpu/rms_norm_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmserve::kernels::cpu {
namespace {

TEST(RmsNormReference, MatchesHandComputedValues) {
  // Row [3, 4]: mean square 12.5, rms sqrt(12.5 + eps).
  std::vector<float> x = {3.f, 4.f, -1.f, 1.f};
  std::vector<float> w = {1.f, 2.f};
  std::vector<float> out(4);
  RmsNormReference(x.data(), w.data(), out.data(), 2, 2, 1e-6f);
  const float r0 = std::sqrt(12.5f + 1e-6f);
  EXPECT_NEAR(out[0], 3.f / r0, 1e-6);
  EXPECT_NEAR(out[1], 8.f / r0, 1e-6);
  const float r1 = std::sqrt(1.f + 1e-6f);
  EXPECT_NEAR(out[2], -1.f / r1, 1e-6);
  EXPECT_NEAR(out[3], 2.f / r1, 1e-6);
}

}  // namespace
}  // namespace llmserve::kernels::cpu
