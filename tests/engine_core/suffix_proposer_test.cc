// Suffix decoding's index and proposer: substring counts as sequences grow
// and leave, drafts from the request's own tokens and from finished
// requests' outputs, and the limits (spec factor, probability, cache size).
#include <gtest/gtest.h>

#include "engine_core/suffix_proposer.h"
#include "engine_core/suffix_tree.h"

namespace llmserve::engine_core {
namespace suffix_proposer_test {

int64_t CountOf(const SuffixTree& t, std::vector<int32_t> path) {
  const SuffixTree::Node* n = t.Find(path);
  return n == nullptr ? 0 : n->count;
}

TEST(SuffixTree, CountsEverySubstringUpToTheDepth) {
  SuffixTree t(4);
  for (int32_t tok : {1, 2, 1, 2, 3}) t.Append(7, tok);
  EXPECT_EQ(CountOf(t, {1}), 2);
  EXPECT_EQ(CountOf(t, {1, 2}), 2);
  EXPECT_EQ(CountOf(t, {2, 1, 2}), 1);
  EXPECT_EQ(CountOf(t, {2, 1, 2, 3}), 1);
  EXPECT_EQ(CountOf(t, {1, 2, 1, 2, 3}), 0);  // longer than the depth
  EXPECT_EQ(CountOf(t, {2, 2}), 0);
  EXPECT_EQ(t.root().children.size(), 3u);
  EXPECT_EQ(std::vector<int32_t>(t.tokens(7).begin(), t.tokens(7).end()), (std::vector<int32_t>{1, 2, 1, 2, 3}));
}

TEST(SuffixTree, RemovingASequenceLeavesTheOthersCounts) {
  SuffixTree t(3);
  for (int32_t tok : {1, 2, 3}) t.Append(1, tok);
  for (int32_t tok : {2, 3, 4, 2, 3}) t.Append(2, tok);
  EXPECT_EQ(CountOf(t, {2, 3}), 3);
  t.Remove(1);
  EXPECT_EQ(CountOf(t, {2, 3}), 2);
  EXPECT_EQ(CountOf(t, {2, 3, 4}), 1);
  EXPECT_EQ(CountOf(t, {1}), 0);
  EXPECT_EQ(t.Find(std::vector<int32_t>{1}), nullptr);  // freed
  t.Remove(2);
  EXPECT_TRUE(t.root().children.empty());
  EXPECT_EQ(t.num_sequences(), 0u);
  t.Remove(2);  // unknown: ignored
}

TEST(SuffixProposer, DraftsFollowTheRequestsOwnTokens) {
  SuffixProposer p(SuffixDecodingConfig{});
  std::vector<int32_t> drafts;
  // [5 6] occurred before, followed by 7 8: matched length 2 allows 2 drafts (spec factor 1).
  const std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 5, 6};
  p.Propose("a", tokens, 7, 8, &drafts);
  EXPECT_EQ(drafts, (std::vector<int32_t>{7, 8}));
  // max_drafts caps them.
  p.Propose("a", tokens, 7, 1, &drafts);
  EXPECT_EQ(drafts, (std::vector<int32_t>{7}));
  // Nothing occurred before the last token: no drafts.
  const std::vector<int32_t> more = {5, 6, 7, 8, 9, 5, 6, 42};
  p.Propose("a", more, 7, 8, &drafts);
  EXPECT_TRUE(drafts.empty());
}

TEST(SuffixProposer, AWiderSpecFactorAndTheProbabilityFloor) {
  SuffixDecodingConfig c;
  c.max_spec_factor = 3.0;
  SuffixProposer p(c);
  std::vector<int32_t> drafts;
  // [1] is followed by 2 3 4 once before; [1] itself also ends the context, so
  // every step's estimate is 1/2: 0.5, 0.5, 0.5 (factor 3: three drafts).
  p.Propose("a", std::vector<int32_t>{1, 2, 3, 4, 1}, 5, 8, &drafts);
  EXPECT_EQ(drafts, (std::vector<int32_t>{2, 3, 4}));
  c.min_token_prob = 0.6;
  SuffixProposer strict(c);
  strict.Propose("a", std::vector<int32_t>{1, 2, 3, 4, 1}, 5, 8, &drafts);
  EXPECT_TRUE(drafts.empty());
}

TEST(SuffixProposer, FinishedOutputsServeOtherRequestsUntilEvicted) {
  SuffixDecodingConfig c;
  c.max_cached_requests = 1;
  SuffixProposer p(c);
  std::vector<int32_t> drafts;
  // a's prompt [1], output [30 31 32 33]; only outputs enter the shared index.
  p.Propose("a", std::vector<int32_t>{1, 30, 31, 32, 33}, 1, 4, &drafts);
  p.Finish("a");
  EXPECT_EQ(p.num_active(), 0u);
  EXPECT_EQ(p.num_cached(), 1u);
  p.Propose("b", std::vector<int32_t>{9, 30, 31}, 3, 4, &drafts);
  EXPECT_EQ(drafts, (std::vector<int32_t>{32, 33}));
  // c's output pushes a's out (one cached request at most).
  p.Propose("c", std::vector<int32_t>{2, 50, 51}, 1, 4, &drafts);
  p.Finish("c");
  EXPECT_EQ(p.num_cached(), 1u);
  p.Propose("b", std::vector<int32_t>{9, 30, 31, 77, 30, 31}, 3, 4, &drafts);
  EXPECT_EQ(drafts, (std::vector<int32_t>{77, 30}));  // from its own tokens only: a's output is gone
  p.Propose("d", std::vector<int32_t>{50}, 1, 4, &drafts);
  EXPECT_EQ(drafts, (std::vector<int32_t>{51}));
}

TEST(SuffixProposer, NoSharedIndexWithoutCachedRequests) {
  SuffixDecodingConfig c;
  c.max_cached_requests = 0;
  SuffixProposer p(c);
  std::vector<int32_t> drafts;
  p.Propose("a", std::vector<int32_t>{1, 30, 31, 32}, 1, 4, &drafts);
  p.Finish("a");
  EXPECT_EQ(p.num_cached(), 0u);
  p.Propose("b", std::vector<int32_t>{30, 31}, 2, 4, &drafts);
  EXPECT_TRUE(drafts.empty());
}

}  // namespace suffix_proposer_test
}  // namespace llmserve::engine_core
