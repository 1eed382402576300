// TopKRouting: softmax over all experts, the k largest in descending order
// (ties to the lower id), renormalised only when asked.
#include "worker/moe_routing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace llmserve::worker {
namespace {

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

}  // namespace
}  // namespace llmserve::worker
