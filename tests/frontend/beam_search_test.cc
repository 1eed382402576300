// The beam search core (frontend/serving/beam_search.h) on hand-made
// logprob rows: candidate ranking across beams, EOS ending beams (kept or not
// in the tokens, ignored with ignore_eos), vLLM's length-penalised score with
// its EOS adjustment, and deterministic ties.
#include "frontend/serving/beam_search.h"

#include <cmath>

#include <gtest/gtest.h>

namespace llmserve::frontend::serving::beam_search_test {

using Rows = std::vector<std::vector<BeamCandidate>>;

BeamSearchParams Params(int32_t width, int32_t max_tokens) {
  BeamSearchParams p;
  p.beam_width = width;
  p.max_tokens = max_tokens;
  p.eos_token_id = 99;
  return p;
}

std::vector<std::vector<int32_t>> Outputs(const BeamSearch& search, const std::vector<Beam>& beams) {
  std::vector<std::vector<int32_t>> out;
  for (const Beam& b : beams) out.push_back(search.OutputTokens(b));
  return out;
}

TEST(BeamSearchCore, KeepsTheBestCandidatesAcrossBeams) {
  BeamSearch search(Params(2, 3), {1, 2});
  ASSERT_EQ(search.live().size(), 1u);
  search.Step(Rows{{{10, -0.5}, {11, -1.0}, {12, -3.0}, {13, -4.0}}});
  ASSERT_EQ(search.live().size(), 2u);
  EXPECT_EQ(search.live()[0].tokens, (std::vector<int32_t>{1, 2, 10}));
  EXPECT_EQ(search.live()[1].tokens, (std::vector<int32_t>{1, 2, 11}));
  // Beam 11 (-1.0) has a much better continuation than beam 10 (-0.5): both
  // survivors come from the second beam, in cumulative-logprob order.
  search.Step(Rows{{{20, -2.0}, {21, -2.5}}, {{30, -0.1}, {31, -0.2}}});
  ASSERT_EQ(search.live().size(), 2u);
  EXPECT_EQ(search.live()[0].tokens, (std::vector<int32_t>{1, 2, 11, 30}));
  EXPECT_DOUBLE_EQ(search.live()[0].cum_logprob, -1.1);
  EXPECT_EQ(search.live()[1].tokens, (std::vector<int32_t>{1, 2, 11, 31}));
  EXPECT_FALSE(search.done());
  search.Step(Rows{{{40, -1.0}}, {{41, -1.0}}});
  EXPECT_TRUE(search.done());
  const std::vector<Beam> best = search.Best();
  EXPECT_EQ(Outputs(search, best), (std::vector<std::vector<int32_t>>{{11, 30, 40}, {11, 31, 41}}));
  EXPECT_FALSE(best[0].ended_by_eos);
}

TEST(BeamSearchCore, ScoreDividesByLengthToThePenaltyWithoutAFinalEos) {
  EXPECT_DOUBLE_EQ(BeamSearchScore({1, 2, 3, 4}, -2.0, 99, 1.0), -0.5);
  EXPECT_DOUBLE_EQ(BeamSearchScore({1, 2, 3, 99}, -3.0, 99, 1.0), -1.0);  // EOS not counted
  EXPECT_DOUBLE_EQ(BeamSearchScore({1, 2, 3, 4}, -2.0, 99, 0.0), -2.0);
  EXPECT_DOUBLE_EQ(BeamSearchScore({1, 2, 3, 4}, -2.0, 99, 2.0), -2.0 / 16.0);
  EXPECT_DOUBLE_EQ(BeamSearchScore({1, 2, 3, 99}, -3.0, std::nullopt, 1.0), -0.75);
  EXPECT_DOUBLE_EQ(BeamSearchScore({99}, -3.0, 99, 1.0), -3.0);  // vLLM would divide by zero
}

TEST(BeamSearchCore, EosEndsABeamWhateverItsRank) {
  BeamSearch search(Params(1, 3), {1});
  // EOS ranks third of four candidates, yet its beam ends (vLLM keeps every EOS candidate).
  search.Step(Rows{{{10, -0.1}, {11, -0.2}, {99, -0.3}, {12, -0.4}}});
  ASSERT_EQ(search.live().size(), 1u);
  EXPECT_EQ(search.live()[0].tokens, (std::vector<int32_t>{1, 10}));
  search.Step(Rows{{{20, -5.0}, {21, -6.0}}});
  search.Step(Rows{{{30, -5.0}}});
  ASSERT_TRUE(search.done());
  const std::vector<Beam> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  // Ended: -0.3 over len([1]) = -0.3; live: -10.1 / len([1, 10, 20, 30]).
  EXPECT_TRUE(best[0].ended_by_eos);
  EXPECT_DOUBLE_EQ(best[0].cum_logprob, -0.3);
  EXPECT_TRUE(search.OutputTokens(best[0]).empty());  // the EOS is not kept
  EXPECT_TRUE(search.TextTokens(best[0]).empty());
}

TEST(BeamSearchCore, IncludeStopStrKeepsTheEosInTokensNotText) {
  BeamSearchParams p = Params(1, 2);
  p.include_stop_str_in_output = true;
  BeamSearch search(p, {1, 2});
  search.Step(Rows{{{10, -0.1}}});
  search.Step(Rows{{{99, -0.2}, {11, -9.0}}});
  const std::vector<Beam> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].ended_by_eos);
  EXPECT_EQ(search.OutputTokens(best[0]), (std::vector<int32_t>{10, 99}));
  EXPECT_EQ(search.TextTokens(best[0]), (std::vector<int32_t>{10}));
  // The score does not count the EOS: -0.3 over len([1, 2, 10]).
  EXPECT_DOUBLE_EQ(BeamSearchScore(best[0].tokens, best[0].cum_logprob, 99, 1.0), -0.1);
}

TEST(BeamSearchCore, IgnoreEosExtendsWithEos) {
  BeamSearchParams p = Params(2, 1);
  p.ignore_eos = true;
  BeamSearch search(p, {1});
  search.Step(Rows{{{99, -0.15}, {10, -0.2}}});
  ASSERT_EQ(search.live().size(), 2u);
  EXPECT_EQ(search.live()[0].tokens.back(), 99);  // ranked by cumulative logprob
  const std::vector<Beam> best = search.Best();
  ASSERT_EQ(best.size(), 2u);
  EXPECT_FALSE(best[1].ended_by_eos);
  // Scored as vLLM scores it: a last EOS is still not counted (-0.15 / 1 vs -0.2 / 2).
  EXPECT_EQ(search.OutputTokens(best[0]), (std::vector<int32_t>{10}));
  EXPECT_EQ(search.OutputTokens(best[1]), (std::vector<int32_t>{99}));
  EXPECT_EQ(search.TextTokens(best[1]), (std::vector<int32_t>{99}));
}

TEST(BeamSearchCore, LengthPenaltyReordersEndedAndLiveBeams) {
  // Ended at once at -1.0 (EOS not kept: length 1) vs live after 3 tokens at -1.8 (length 4).
  auto run = [](double length_penalty) {
    BeamSearchParams p = Params(1, 3);
    p.length_penalty = length_penalty;
    BeamSearch search(p, {1});
    search.Step(Rows{{{10, -0.5}, {99, -1.0}}});
    search.Step(Rows{{{11, -0.6}}});
    search.Step(Rows{{{12, -0.7}}});
    return search.Best()[0].ended_by_eos;
  };
  EXPECT_TRUE(run(0.0));   // -1.0 vs -1.8
  EXPECT_FALSE(run(1.0));  // -1.0 / 1 vs -1.8 / 4 = -0.45
}

TEST(BeamSearchCore, TiesAreBrokenByBeamThenRowOrder) {
  BeamSearch search(Params(3, 2), {1});
  search.Step(Rows{{{10, -1.0}, {11, -1.0}, {12, -1.0}, {13, -1.0}}});
  ASSERT_EQ(search.live().size(), 3u);
  EXPECT_EQ(search.live()[0].tokens.back(), 10);
  EXPECT_EQ(search.live()[1].tokens.back(), 11);
  EXPECT_EQ(search.live()[2].tokens.back(), 12);
  search.Step(Rows{{{20, -1.0}}, {{21, -1.0}, {22, -1.0}}, {{23, -1.0}}});
  EXPECT_EQ(Outputs(search, search.Best()), (std::vector<std::vector<int32_t>>{{10, 20}, {11, 21}, {11, 22}}));
}

TEST(BeamSearchCore, EndedBeamsWinScoreTiesInTheOrderTheyEnded) {
  BeamSearch search(Params(2, 1), {1, 2});
  search.Step(Rows{{{99, -1.0}, {10, -1.5}}});
  std::vector<Beam> best = search.Best();
  ASSERT_EQ(best.size(), 2u);
  EXPECT_TRUE(best[0].ended_by_eos);  // -0.5 vs -1.5 / 3 = -0.5: a tie, the ended beam first
  EXPECT_EQ(search.OutputTokens(best[1]), (std::vector<int32_t>{10}));
}

TEST(BeamSearchCore, RepeatedTokenInARowCountsOnce) {
  // Column 0 of an engine row is the sampled token, which is usually also in the top list.
  BeamSearch search(Params(2, 1), {1});
  search.Step(Rows{{{10, -0.1}, {10, -0.1}, {11, -0.2}}});
  EXPECT_EQ(Outputs(search, search.Best()), (std::vector<std::vector<int32_t>>{{10}, {11}}));
}

TEST(BeamSearchCore, BeamsKeepTheRowsTheyGrewFrom) {
  BeamSearchParams p = Params(1, 2);
  p.include_stop_str_in_output = true;
  BeamSearch search(p, {1});
  search.Step(Rows{{{10, -0.1}, {10, -0.1}, {11, -0.2}}});
  search.Step(Rows{{{99, -0.1}, {12, -0.4}}});
  const std::vector<Beam> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].ended_by_eos);  // -0.2 / 2 beats -0.5 / 3
  EXPECT_EQ(best[0].rows, (std::vector<std::vector<BeamCandidate>>{{{10, -0.1}, {11, -0.2}}, {{99, -0.1}, {12, -0.4}}}));
}

TEST(BeamSearchCore, StopsWhenNoCandidateIsLeft) {
  BeamSearch search(Params(2, 5), {1});
  search.Step(Rows{{{99, -0.1}}});
  EXPECT_TRUE(search.live().empty());
  EXPECT_TRUE(search.done());
  EXPECT_EQ(search.steps(), 1);
  ASSERT_EQ(search.Best().size(), 1u);
}

}  // namespace llmserve::frontend::serving::beam_search_test
