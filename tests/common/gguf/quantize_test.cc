// Quantise → dequantise: every type reproduces its input within the error
// its format allows (per block, relative to the block's largest magnitude),
// values on a type's grid come back exactly, and bad input is refused.

#include "common/gguf/quantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/common/gguf/gguf_test_util.h"
#include "common/gguf/dequantize.h"

namespace llmserve::common::gguf {
namespace {

// Largest |error| allowed, as a fraction of the block's largest magnitude
// (K-quants: of the 256-value super-block). Each is the format's rounding
// step over two plus what rounding its half / 6-bit / 8-bit scales adds;
// the sign-asymmetric types (Q4_0, Q5_0, Q6_K) may clamp one value per block
// by a full step.
double MaxErrorFraction(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return 0;
    case GgmlType::kF16: return 0x1p-11;
    case GgmlType::kBF16: return 0x1p-8;
    case GgmlType::kQ8_0: return 0.5 / 127 * 1.01;
    case GgmlType::kQ4_0: return 1.0 / 8 * 1.01;
    case GgmlType::kQ4_1: return 1.0 / 15 * 1.01;
    case GgmlType::kQ5_0: return 1.0 / 16 * 1.01;
    case GgmlType::kQ5_1: return 1.0 / 31 * 1.01;
    case GgmlType::kQ4_K: return 0.1;
    case GgmlType::kQ5_K: return 0.06;
    case GgmlType::kQ6_K: return 0.04;
    default: return 0;
  }
}

std::vector<float> RoundTrip(GgmlType type, const std::vector<float>& x) {
  std::vector<uint8_t> bytes(RowBytes(type, x.size()).value());
  EXPECT_TRUE(QuantizeRow(type, x.data(), x.size(), bytes.data()).ok());
  std::vector<float> y(x.size());
  EXPECT_TRUE(DequantizeRow(type, bytes.data(), x.size(), y.data()).ok());
  return y;
}

TEST(Quantize, EveryTypeWithinItsErrorBound) {
  const std::vector<float> x = testing::SampleValues(512, 4, 7);
  for (GgmlType type : testing::DequantizableTypes()) {
    SCOPED_TRACE(GgmlTypeName(type));
    const std::vector<float> y = RoundTrip(type, x);
    const uint32_t block = TypeInfo(type).block_size == 1 ? 1 : TypeInfo(type).block_size;
    double worst = 0, sum_sq = 0, sum_sq_largest = 0;
    for (size_t b = 0; b < x.size(); b += block) {
      double largest = 0;
      for (size_t i = b; i < b + block; ++i) largest = std::max(largest, std::fabs(double{x[i]}));
      const double allowed = MaxErrorFraction(type) * largest + 1e-5;  // + half scales that underflow
      for (size_t i = b; i < b + block; ++i) {
        const double err = std::fabs(double{y[i]} - x[i]);
        ASSERT_LE(err, allowed) << "value " << i << ": " << x[i] << " came back as " << y[i];
        if (largest > 1e-3) worst = std::max(worst, err / largest);
        sum_sq += err * err;
        sum_sq_largest += largest * largest;
      }
    }
    // Rounding errors spread evenly over a step: their RMS is about 0.58 of
    // the largest rounding error (1/sqrt(3)), less where clamping sets the bound.
    const double rms = std::sqrt(sum_sq / sum_sq_largest);
    EXPECT_LE(rms, 0.65 * MaxErrorFraction(type));
    std::printf("%-5s worst error %.4f of the block's max, RMS %.5f\n", GgmlTypeName(type).c_str(), worst, rms);
  }
}

// Values on a type's own grid (q · d with d a power of two) come back exactly.
TEST(Quantize, ValuesOnTheGridComeBackExactly) {
  std::vector<float> q8(32), q4(32), q5(32);
  for (int j = 0; j < 32; ++j) {
    q8[j] = static_cast<float>(j * 8 - 127) * 0x1p-7f;  // -127 .. 121: d = 2^-7
    q4[j] = static_cast<float>(j % 16 - 8) * 0.25f;      // -8 .. 7:     d = 0.25 (max magnitude is -8·d)
    q5[j] = static_cast<float>(j - 16) * 0.5f;           // -16 .. 15:   d = 0.5
  }
  EXPECT_EQ(RoundTrip(GgmlType::kQ8_0, q8), q8);
  EXPECT_EQ(RoundTrip(GgmlType::kQ4_0, q4), q4);
  EXPECT_EQ(RoundTrip(GgmlType::kQ5_0, q5), q5);
  const std::vector<float> zeros(256, 0.0f);
  for (GgmlType type : testing::DequantizableTypes()) EXPECT_EQ(RoundTrip(type, zeros), zeros) << GgmlTypeName(type);
}

TEST(Quantize, RefusesWhatItCannotStore) {
  std::vector<float> x(256, 1.0f);
  std::vector<uint8_t> out(1024);
  Status partial = QuantizeRow(GgmlType::kQ4_K, x.data(), 128, out.data());
  EXPECT_EQ(partial.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(partial.message(), "128 values are not a whole number of Q4_K blocks of 256");
  x[3] = std::numeric_limits<float>::quiet_NaN();
  Status nan = QuantizeRow(GgmlType::kQ8_0, x.data(), 32, out.data());
  EXPECT_EQ(nan.message(), "cannot quantize a non-finite value to Q8_0");
  x[3] = 1e30f;
  Status huge = QuantizeRow(GgmlType::kQ6_K, x.data(), 256, out.data());
  EXPECT_EQ(huge.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(huge.message().find("values too large for Q6_K"), std::string::npos) << huge.message();
  Status q2k = QuantizeRow(GgmlType::kQ2_K, x.data(), 256, out.data());
  EXPECT_EQ(q2k.code(), StatusCode::kUnimplemented);
  // Plain types convert what they are given, infinities included.
  EXPECT_TRUE(QuantizeRow(GgmlType::kF16, x.data(), 256, out.data()).ok());
}

TEST(Dequantize, UnsupportedTypeIsAClearError) {
  std::vector<uint8_t> block(84);
  std::vector<float> out(256);
  Status s = DequantizeRow(GgmlType::kQ2_K, block.data(), 256, out.data());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(),
            "cannot dequantize ggml type Q2_K; supported: F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, "
            "BF16");
}

}  // namespace
}  // namespace llmserve::common::gguf
