// Request arrival times of `llmserve bench serve`.
#include "deploy/bench/arrivals.h"

#include <gtest/gtest.h>

#include <cmath>

namespace llmserve::deploy::bench {
namespace {

std::vector<double> Gaps(const std::vector<double>& t) {
  std::vector<double> g;
  double prev = 0;
  for (double x : t) {
    g.push_back(x - prev);
    prev = x;
  }
  return g;
}

double CoefficientOfVariation(const std::vector<double>& g) {
  double mean = 0, sq = 0;
  for (double x : g) mean += x;
  mean /= static_cast<double>(g.size());
  for (double x : g) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(g.size())) / mean;
}

TEST(BenchArrivals, InfiniteRateSendsEverythingAtOnce) {
  auto t = ArrivalTimes(5, HUGE_VAL, 1.0, 0);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, std::vector<double>(5, 0.0));
}

TEST(BenchArrivals, PoissonHitsTheMeanRateAndIsNormalisedToNOverRate) {
  auto t = ArrivalTimes(4000, 20.0, 1.0, 7);
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->back(), 4000 / 20.0, 1e-9);  // scaled so the last is at n / rate
  EXPECT_TRUE(std::is_sorted(t->begin(), t->end()));
  EXPECT_GT(t->front(), 0);  // the first request waits one gap too
  const auto g = Gaps(*t);
  EXPECT_NEAR(CoefficientOfVariation(g), 1.0, 0.06);  // exponential gaps: CV 1
}

TEST(BenchArrivals, BurstinessShapesTheGaps) {
  // Gamma with shape k has CV 1/sqrt(k): burstier below 1, steadier above.
  auto bursty = ArrivalTimes(4000, 10.0, 0.25, 1);
  auto steady = ArrivalTimes(4000, 10.0, 4.0, 1);
  ASSERT_TRUE(bursty.ok() && steady.ok());
  EXPECT_NEAR(CoefficientOfVariation(Gaps(*bursty)), 2.0, 0.15);
  EXPECT_NEAR(CoefficientOfVariation(Gaps(*steady)), 0.5, 0.04);
  auto even = ArrivalTimes(10, 4.0, HUGE_VAL, 1);  // infinite burstiness: fixed gaps
  ASSERT_TRUE(even.ok());
  for (size_t i = 0; i < 10; ++i) EXPECT_NEAR((*even)[i], 0.25 * static_cast<double>(i + 1), 1e-12);
}

TEST(BenchArrivals, SeedMakesItReproducibleAndBadInputIsAnError) {
  EXPECT_EQ(*ArrivalTimes(50, 3.0, 1.0, 42), *ArrivalTimes(50, 3.0, 1.0, 42));
  EXPECT_NE(*ArrivalTimes(50, 3.0, 1.0, 42), *ArrivalTimes(50, 3.0, 1.0, 43));
  EXPECT_FALSE(ArrivalTimes(5, 0.0, 1.0, 0).ok());
  EXPECT_FALSE(ArrivalTimes(5, 1.0, 0.0, 0).ok());
  EXPECT_FALSE(ArrivalTimes(5, -1.0, 1.0, 0).ok());
}

}  // namespace
}  // namespace llmserve::deploy::bench
