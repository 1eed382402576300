// FP8 E4M3 (base/float8.h): every code widens to the value the format
// defines and narrows back to itself; narrowing picks the nearest value, ties
// to even, and saturates at ±448.
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

}  // namespace
}  // namespace llmserve::base::float8_test
