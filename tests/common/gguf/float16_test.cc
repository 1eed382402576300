// Half and bfloat16 conversions: widening is exact, narrowing rounds to
// nearest with ties to even (checked over every half).

#include "base/float16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace llmserve::common::gguf {

using base::Bf16ToFloat;
using base::FloatToBf16;
using base::FloatToHalf;
using base::HalfToFloat;
namespace {

TEST(Float16, KnownValues) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x03ff), 1023 * 0x1p-24f);
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000);  // tie between 0 and the smallest subnormal: even
  EXPECT_EQ(FloatToHalf(0x1.8p-25f), 0x0001);
  EXPECT_EQ(FloatToHalf(0x1p-26f), 0x0000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7e00, 0x7e00);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
}

// Every finite half survives half → float → half, and the float midway to the
// next half rounds to whichever of the two has an even mantissa.
TEST(Float16, EveryHalfRoundTripsAndMidpointsRoundToEven) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint16_t bits = static_cast<uint16_t>(h | sign);
      const float f = HalfToFloat(bits);
      ASSERT_EQ(FloatToHalf(f), bits) << std::hex << bits;
      if (h == 0x7bff) continue;  // the next "half" is infinity
      const float next = HalfToFloat(static_cast<uint16_t>(bits + 1));
      const float mid = (f + next) / 2;  // exact: a half has 11 significant bits
      const uint16_t even = (bits & 1) ? static_cast<uint16_t>(bits + 1) : bits;
      ASSERT_EQ(FloatToHalf(mid), even) << std::hex << bits;
      ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), bits) << std::hex << bits;
      ASSERT_EQ(FloatToHalf(std::nextafter(mid, next)), static_cast<uint16_t>(bits + 1)) << std::hex << bits;
    }
  }
}

TEST(Bfloat16, RoundsToNearestEven) {
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie, even below
  EXPECT_EQ(FloatToBf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie, even above
  EXPECT_EQ(FloatToBf16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t b = 0; b < 0x7f80; b += 7) {
    ASSERT_EQ(FloatToBf16(Bf16ToFloat(static_cast<uint16_t>(b))), b);
  }
}

}  // namespace
}  // namespace llmserve::common::gguf
