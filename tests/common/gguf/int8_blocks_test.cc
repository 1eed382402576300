// ToInt8Blocks: Q8_0, Q4_0 and Q5_0 read as int8 values and block scales
// give exactly what DequantizeRow gives, over the whole range of quants
// (Q4_0's -8..7 and Q5_0's -16..15 included); other types are refused.

#include "common/gguf/int8_blocks.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/gguf/dequantize.h"
#include "common/gguf/quantize.h"

namespace llmserve::common::gguf {
namespace {

TEST(Int8Blocks, ScaleTimesQuantIsTheDequantizedValue) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1.f);
  const uint64_t n = 32 * 64;
  std::vector<float> values(n);
  for (auto& v : values) v = normal(rng);
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ5_0}) {
    ASSERT_TRUE(HasInt8Blocks(type));
    std::vector<uint8_t> blocks(n / 32 * TypeInfo(type).block_bytes);
    ASSERT_TRUE(QuantizeRow(type, values.data(), n, blocks.data()).ok());
    std::vector<float> want(n);
    ASSERT_TRUE(DequantizeRow(type, blocks.data(), n, want.data()).ok());
    std::vector<int8_t> q(n);
    std::vector<float> scales(n / 32);
    ASSERT_TRUE(ToInt8Blocks(type, blocks.data(), n, q.data(), scales.data()).ok());
    int lowest = 0, highest = 0;
    for (uint64_t i = 0; i < n; ++i) {
      EXPECT_EQ(scales[i / 32] * static_cast<float>(q[i]), want[i]) << TypeInfo(type).name << " value " << i;
      lowest = std::min<int>(lowest, q[i]);
      highest = std::max<int>(highest, q[i]);
    }
    const int range = type == GgmlType::kQ4_0 ? 8 : type == GgmlType::kQ5_0 ? 16 : 127;
    EXPECT_EQ(lowest, type == GgmlType::kQ8_0 ? -127 : -range) << TypeInfo(type).name;
    EXPECT_LE(highest, range) << TypeInfo(type).name;
  }
}

TEST(Int8Blocks, OtherTypesAndPartBlocksAreRefused) {
  std::vector<uint8_t> blocks(64);
  std::vector<int8_t> q(64);
  std::vector<float> scales(2);
  EXPECT_FALSE(HasInt8Blocks(GgmlType::kQ4_1));
  EXPECT_FALSE(ToInt8Blocks(GgmlType::kQ4_1, blocks.data(), 32, q.data(), scales.data()).ok());
  EXPECT_FALSE(ToInt8Blocks(GgmlType::kQ4_0, blocks.data(), 31, q.data(), scales.data()).ok());
}

}  // namespace
}  // namespace llmserve::common::gguf
