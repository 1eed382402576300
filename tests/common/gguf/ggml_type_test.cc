// The ggml type table: GGUF's numbers, block geometry, row sizes.

#include "common/gguf/ggml_type.h"

#include <gtest/gtest.h>

namespace llmserve::common::gguf {
namespace {

TEST(GgmlType, NumbersAndBlocksAsGgufDefinesThem) {
  struct Expect {
    uint32_t number;
    const char* name;
    uint32_t block_size, block_bytes;
  };
  const Expect expected[] = {{0, "F32", 1, 4},       {1, "F16", 1, 2},        {2, "Q4_0", 32, 18},
                             {3, "Q4_1", 32, 20},    {6, "Q5_0", 32, 22},     {7, "Q5_1", 32, 24},
                             {8, "Q8_0", 32, 34},    {12, "Q4_K", 256, 144},  {13, "Q5_K", 256, 176},
                             {14, "Q6_K", 256, 210}, {30, "BF16", 1, 2},      {10, "Q2_K", 256, 84},
                             {23, "IQ4_XS", 256, 136}, {39, "MXFP4", 32, 17}};
  for (const Expect& e : expected) {
    const GgmlTypeInfo* info = FindGgmlType(e.number);
    ASSERT_NE(info, nullptr) << e.name;
    EXPECT_STREQ(info->name, e.name);
    EXPECT_EQ(info->block_size, e.block_size) << e.name;
    EXPECT_EQ(info->block_bytes, e.block_bytes) << e.name;
  }
  for (uint32_t retired : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u, 99u}) EXPECT_EQ(FindGgmlType(retired), nullptr);
  EXPECT_EQ(GgmlTypeName(99), "unknown type 99");
  EXPECT_EQ(DequantizableTypeNames(), "F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, BF16");
}

TEST(GgmlType, RowBytes) {
  EXPECT_EQ(RowBytes(GgmlType::kQ4_K, 512).value(), 288u);
  EXPECT_EQ(RowBytes(GgmlType::kF16, 3).value(), 6u);
  const auto partial = RowBytes(GgmlType::kQ8_0, 48);
  ASSERT_FALSE(partial.ok());
  EXPECT_EQ(partial.status().message(), "a row of 48 values is not a whole number of Q8_0 blocks of 32");
  EXPECT_FALSE(RowBytes(GgmlType::kF64, uint64_t{1} << 62).ok());  // 2^65 bytes
}

}  // namespace
}  // namespace llmserve::common::gguf
