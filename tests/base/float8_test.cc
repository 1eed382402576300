// FP8 E4M3 and E5M2 (base/float8.h): every code widens to the value the
// format defines and narrows back to itself; narrowing picks the nearest
// value, ties to even, and saturates at the largest finite value.
#include "base/float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmserve::base::float8_test {
namespace {

TEST(Float8, CodesWidenToTheirValuesAndNarrowBack) {
  EXPECT_EQ(Fp8E4M3ToFloat(0x7e), 448.f);          // S.1111.110: the largest finite value
  EXPECT_EQ(Fp8E4M3ToFloat(0x38), 1.f);            // exponent 7 = bias
  EXPECT_EQ(Fp8E4M3ToFloat(0x01), 0x1p-9f);        // the smallest subnormal
  EXPECT_EQ(Fp8E4M3ToFloat(0x08), 0x1p-6f);        // the smallest normal
  EXPECT_EQ(Fp8E4M3ToFloat(0xc4), -3.f);           // -1.5 × 2^1
  EXPECT_TRUE(std::isnan(Fp8E4M3ToFloat(0x7f)));   // S.1111.111
  EXPECT_TRUE(std::isnan(Fp8E4M3ToFloat(0xff)));
  for (int v = 0; v < 256; ++v) {
    const float f = Fp8E4M3ToFloat(static_cast<uint8_t>(v));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToFp8E4M3(f), static_cast<uint8_t>(v)) << "code " << v << " = " << f;
  }
}

TEST(Float8, NarrowingRoundsToNearestTiesToEvenAndSaturates) {
  EXPECT_EQ(FloatToFp8E4M3(1.0625f), 0x38);   // halfway between 1 (even code) and 1.125
  EXPECT_EQ(FloatToFp8E4M3(1.1875f), 0x3a);   // halfway between 1.125 and 1.25 (even code)
  EXPECT_EQ(FloatToFp8E4M3(1.07f), 0x39);
  EXPECT_EQ(FloatToFp8E4M3(0x1p-10f), 0x00);  // half the smallest subnormal: to even (zero)
  EXPECT_EQ(FloatToFp8E4M3(0x3p-10f), 0x02);  // 1.5 units of 2^-9: to even (2)
  EXPECT_EQ(FloatToFp8E4M3(464.f), 0x7e);     // above 448 saturates (no infinity in E4M3)
  EXPECT_EQ(FloatToFp8E4M3(-1e9f), 0xfe);
  // Against a search over every finite value, for values across the range.
  std::vector<float> values;
  for (int v = 0; v < 0x7f; ++v) values.push_back(Fp8E4M3ToFloat(static_cast<uint8_t>(v)));
  for (float x = 1e-4f; x < 448.f; x *= 1.0123f) {
    size_t best = 0;
    for (size_t k = 1; k < values.size(); ++k) {
      const float d = std::fabs(values[k] - x), bd = std::fabs(values[best] - x);
      if (d < bd || (d == bd && k % 2 == 0)) best = k;
    }
    EXPECT_EQ(FloatToFp8E4M3(x), best) << x;
    EXPECT_EQ(FloatToFp8E4M3(-x), best | 0x80) << -x;
  }
}

TEST(Float8, E5M2CodesWidenToTheirValuesAndNarrowBack) {
  EXPECT_EQ(Fp8E5M2ToFloat(0x7b), 57344.f);          // S.11110.11: the largest finite value
  EXPECT_EQ(Fp8E5M2ToFloat(0x3c), 1.f);              // exponent 15 = bias
  EXPECT_EQ(Fp8E5M2ToFloat(0x01), 0x1p-16f);         // the smallest subnormal
  EXPECT_EQ(Fp8E5M2ToFloat(0x04), 0x1p-14f);         // the smallest normal
  EXPECT_EQ(Fp8E5M2ToFloat(0xc2), -3.f);             // -1.5 × 2^1
  EXPECT_EQ(Fp8E5M2ToFloat(0x7c), INFINITY);         // S.11111.00
  EXPECT_EQ(Fp8E5M2ToFloat(0xfc), -INFINITY);
  EXPECT_TRUE(std::isnan(Fp8E5M2ToFloat(0x7d)));     // S.11111 with a mantissa
  EXPECT_TRUE(std::isnan(Fp8E5M2ToFloat(0xff)));
  for (int v = 0; v < 256; ++v) {
    const float f = Fp8E5M2ToFloat(static_cast<uint8_t>(v));
    if (std::isnan(f) || std::isinf(f)) continue;
    EXPECT_EQ(FloatToFp8E5M2(f), static_cast<uint8_t>(v)) << "code " << v << " = " << f;
  }
}

TEST(Float8, E5M2NarrowingRoundsToNearestTiesToEvenAndSaturates) {
  EXPECT_EQ(FloatToFp8E5M2(1.125f), 0x3c);     // halfway between 1 (even code) and 1.25
  EXPECT_EQ(FloatToFp8E5M2(1.375f), 0x3e);     // halfway between 1.25 and 1.5 (even code)
  EXPECT_EQ(FloatToFp8E5M2(0x1p-17f), 0x00);   // half the smallest subnormal: to even (zero)
  EXPECT_EQ(FloatToFp8E5M2(0x3p-17f), 0x02);   // 1.5 units of 2^-16: to even (2)
  EXPECT_EQ(FloatToFp8E5M2(60000.f), 0x7b);    // past the largest finite value: saturates
  EXPECT_EQ(FloatToFp8E5M2(-INFINITY), 0xfb);  // infinities too (__NV_SATFINITE)
  std::vector<float> values;
  for (int v = 0; v <= 0x7b; ++v) values.push_back(Fp8E5M2ToFloat(static_cast<uint8_t>(v)));
  for (float x = 1e-6f; x < 57344.f; x *= 1.0123f) {
    size_t best = 0;
    for (size_t k = 1; k < values.size(); ++k) {
      const float d = std::fabs(values[k] - x), bd = std::fabs(values[best] - x);
      if (d < bd || (d == bd && k % 2 == 0)) best = k;
    }
    EXPECT_EQ(FloatToFp8E5M2(x), best) << x;
    EXPECT_EQ(FloatToFp8E5M2(-x), best | 0x80) << -x;
  }
}

}  // namespace
}  // namespace llmserve::base::float8_test
