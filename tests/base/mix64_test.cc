#include "base/mix64.h"

#include <gtest/gtest.h>

namespace llmserve::base {
namespace {

// The first outputs of splitmix64 seeded with 0 (Vigna's reference generator).
TEST(SplitMix64, MatchesTheReferenceSequence) {
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64Next(&state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64Next(&state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64Next(&state), 0x06c45d188009454fULL);
}

TEST(Mix64, IsTheGeneratorsOutputFunction) {
  uint64_t state = 12345;
  const uint64_t first = Mix64(12345);
  EXPECT_EQ(SplitMix64Next(&state), first);
  EXPECT_EQ(state, 12345 + kSplitMix64Increment);
}

}  // namespace
}  // namespace llmserve::base
