#include "engine_core/ngram_proposer.h"

#include <gtest/gtest.h>

namespace llmserve::engine_core {
namespace ngram_proposer_test {

std::vector<int32_t> Propose(const std::vector<int32_t>& tokens, int32_t min_n, int32_t max_n, int32_t k) {
  std::vector<int32_t> drafts = {99};  // replaced
  ProposeNgram(tokens, NgramConfig{min_n, max_n}, k, &drafts);
  return drafts;
}

TEST(NgramProposer, LongestSuffixMatchProposesWhatFollowed) {
  // vLLM's example: [4,2,3] never occurred before; [2,3] did, followed by 4,2,3.
  EXPECT_EQ(Propose({1, 2, 3, 4, 2, 3}, 2, 3, 4), (std::vector<int32_t>{4, 2, 3}));
  EXPECT_EQ(Propose({1, 2, 3, 4, 2, 3}, 2, 3, 2), (std::vector<int32_t>{4, 2}));
  // The longest length wins over an earlier, shorter match.
  EXPECT_EQ(Propose({7, 3, 8, 5, 6, 3, 9, 5, 6, 3}, 1, 3, 1), (std::vector<int32_t>{9}));
  // Among equally long matches, the earliest.
  EXPECT_EQ(Propose({5, 1, 5, 2, 5}, 1, 1, 1), (std::vector<int32_t>{1}));
  // A match may overlap the suffix: a run of one token proposes more of it.
  EXPECT_EQ(Propose({4, 4, 4, 4}, 2, 2, 3), (std::vector<int32_t>{4, 4}));
}

TEST(NgramProposer, NothingBelowMinLengthOrBeyondTheCap) {
  EXPECT_TRUE(Propose({1, 2, 3, 4, 2, 3}, 3, 3, 4).empty());  // only a 2-gram matches
  EXPECT_TRUE(Propose({1, 2, 3}, 1, 5, 4).empty());
  EXPECT_TRUE(Propose({3}, 1, 1, 4).empty());
  EXPECT_TRUE(Propose({}, 1, 1, 4).empty());
  EXPECT_TRUE(Propose({1, 2, 1, 2}, 1, 2, 0).empty());  // no room for drafts
}

}  // namespace ngram_proposer_test
}  // namespace llmserve::engine_core
