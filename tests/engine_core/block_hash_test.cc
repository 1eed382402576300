#include "engine_core/block_hash.h"

#include <gtest/gtest.h>

#include <vector>

namespace llmserve::engine_core {
namespace {

TEST(BlockHashTest, ParsesAlgorithmNames) {
  EXPECT_EQ(*ParseHashAlgo("sha256"), HashAlgo::kSha256);
  EXPECT_EQ(*ParseHashAlgo("xxhash"), HashAlgo::kXxHash);
  auto bad = ParseHashAlgo("md5");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

class BlockHashAlgoTest : public ::testing::TestWithParam<HashAlgo> {};

TEST_P(BlockHashAlgoTest, DependsOnEveryInput) {
  BlockHasher h(GetParam());
  const std::vector<int32_t> a = {1, 2, 3, 4};
  const std::vector<int32_t> b = {1, 2, 3, 5};
  const BlockHash base = h.Hash(nullptr, a, "", "");
  EXPECT_EQ(base, h.Hash(nullptr, a, "", ""));            // deterministic
  EXPECT_NE(base, h.Hash(nullptr, b, "", ""));            // tokens
  EXPECT_NE(base, h.Hash(nullptr, a, "adapter-7", ""));            // LoRA id
  EXPECT_NE(base, h.Hash(nullptr, a, "", "tenant-a"));    // cache salt
  EXPECT_NE(h.Hash(nullptr, a, "", "x"), h.Hash(nullptr, a, "", "y"));
  EXPECT_NE(h.Hash(&base, a, "", ""), base);               // parent
  const BlockHash other_parent = h.Hash(nullptr, b, "", "");
  EXPECT_NE(h.Hash(&base, a, "", ""), h.Hash(&other_parent, a, "", ""));
  EXPECT_NE(base, BlockHash{});
  // Field boundaries are encoded: moving bytes between LoRA name and salt changes the hash.
  EXPECT_NE(h.Hash(nullptr, a, "ab", "c"), h.Hash(nullptr, a, "a", "bc"));
}

INSTANTIATE_TEST_SUITE_P(Algos, BlockHashAlgoTest,
                         ::testing::Values(HashAlgo::kSha256, HashAlgo::kXxHash));

TEST(BlockHashTest, AlgorithmsDifferAndXxHashUsesHalfTheBits) {
  const std::vector<int32_t> t = {10, 20};
  const BlockHash s = BlockHasher(HashAlgo::kSha256).Hash(nullptr, t, "", "");
  const BlockHash x = BlockHasher(HashAlgo::kXxHash).Hash(nullptr, t, "", "");
  EXPECT_NE(s, x);
  EXPECT_EQ(x.words[2], 0u);
  EXPECT_EQ(x.words[3], 0u);
  EXPECT_NE(s.words[3], 0u);
}

}  // namespace
}  // namespace llmserve::engine_core
