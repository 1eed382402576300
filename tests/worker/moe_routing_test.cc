// TopKRouting: softmax over all experts, the k largest in descending order
// (ties to the lower id), renormalised only when asked. RouteTokens: DeepSeek's
// sigmoid scores, correction bias, groups and scaling.
#include "worker/moe_routing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmserve::worker {
namespace {

// RouteTokens with a softmax, no groups, no bias and scale 1: Qwen3-MoE's rule
// (`renormalize` = norm_topk_prob), and Mixtral's with renormalize true.
void TopKRouting(const float* logits, size_t tokens, size_t num_experts, size_t k, bool renormalize,
                 int32_t* experts, float* weights) {
  RoutingRule r;
  r.num_experts = num_experts;
  r.k = k;
  r.renormalize = renormalize;
  RouteTokens(logits, tokens, r, experts, weights);
}

TEST(MoeRouting, PicksTheLargestInDescendingOrder) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.0f};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  TopKRouting(logits.data(), 1, 4, 2, false, ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 3}));
  double z = 0;
  for (float l : logits) z += std::exp(static_cast<double>(l));
  EXPECT_NEAR(w[0], std::exp(2.0) / z, 1e-6);
  EXPECT_NEAR(w[1], std::exp(1.0) / z, 1e-6);
}

TEST(MoeRouting, RenormalisedWeightsAreASoftmaxOverTheChosenLogits) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.0f};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  TopKRouting(logits.data(), 1, 4, 2, true, ids.data(), w.data());
  EXPECT_NEAR(w[0] + w[1], 1.0, 1e-6);
  EXPECT_NEAR(w[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);  // Mixtral's softmax over the top-2 logits
}

TEST(MoeRouting, EqualWeightsGoToTheLowerExpert) {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 1.0f, 3.0f};
  std::vector<int32_t> ids(3);
  std::vector<float> w(3);
  TopKRouting(logits.data(), 1, 5, 3, true, ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 4}));
  TopKRouting(logits.data(), 1, 5, 1, false, ids.data(), w.data());
  EXPECT_EQ(ids[0], 1);
}

TEST(MoeRouting, RowsAreIndependent) {
  const std::vector<float> rows = {0.f, 1.f, 2.f, 3.f, /**/ 3.f, 2.f, 1.f, 0.f};
  std::vector<int32_t> both(4), first(2), second(2);
  std::vector<float> wb(4), w1(2), w2(2);
  TopKRouting(rows.data(), 2, 4, 2, true, both.data(), wb.data());
  TopKRouting(rows.data(), 1, 4, 2, true, first.data(), w1.data());
  TopKRouting(rows.data() + 4, 1, 4, 2, true, second.data(), w2.data());
  EXPECT_EQ(both, (std::vector<int32_t>{3, 2, 0, 1}));
  EXPECT_EQ(std::vector<float>(wb.begin(), wb.begin() + 2), w1);
  EXPECT_EQ(std::vector<float>(wb.begin() + 2, wb.end()), w2);
}

// V3's noaux_tc: the bias steers the choice, the weights stay the sigmoid
// scores; only the best groups (by their two best choices summed) compete.
TEST(MoeRouting, GroupedSigmoidWithBiasPicksWithinTheBestGroups) {
  // Four groups of two. Group 0 holds the single best expert (0) but a poor
  // second; group 2's pair sums best, then group 3's.
  const std::vector<float> logits = {3.0f, -3.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.5f, 0.9f};
  const std::vector<float> bias = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.5f};
  RoutingRule r;
  r.num_experts = 8;
  r.k = 2;
  r.scoring = MoeScoring::kSigmoid;
  r.group_score = MoeGroupScore::kTopTwoSum;
  r.n_group = 4;
  r.topk_group = 2;
  r.correction_bias = bias.data();
  r.scale = 2.5f;
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  RouteTokens(logits.data(), 1, r, ids.data(), w.data());
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  // Group sums: g0 0.95+0.05=1.00, g1 1.00, g2 1.46, g3 0.62+1.21=1.83: groups 3 and 2.
  EXPECT_EQ(ids, (std::vector<int32_t>{7, 4}));
  EXPECT_NEAR(w[0], 2.5 * sigmoid(0.9), 1e-6);  // the score, not score + bias
  EXPECT_NEAR(w[1], 2.5 * sigmoid(1.0), 1e-6);
  r.renormalize = true;
  RouteTokens(logits.data(), 1, r, ids.data(), w.data());
  EXPECT_NEAR(w[0] + w[1], 2.5, 1e-6);
  // Without groups expert 0 (0.95) comes second, after 7 (0.71 + 0.5).
  r.group_score = MoeGroupScore::kNone;
  RouteTokens(logits.data(), 1, r, ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{7, 0}));
}

// V2's group_limited_greedy: groups scored by their best softmax score.
TEST(MoeRouting, GroupLimitedGreedyScoresGroupsByTheirBest) {
  const std::vector<float> logits = {2.0f, -5.0f, 1.5f, 1.5f, 0.0f, 0.0f};
  RoutingRule r;
  r.num_experts = 6;
  r.k = 2;
  r.group_score = MoeGroupScore::kMax;
  r.n_group = 3;
  r.topk_group = 1;
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  RouteTokens(logits.data(), 1, r, ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{0, 1}));  // group 0 (best 2.0) beats group 1 (sum 3.0, best 1.5)
}

}  // namespace
}  // namespace llmserve::worker
