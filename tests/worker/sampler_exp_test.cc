#include "worker/sampler_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace llmserve::worker {
namespace {

TEST(SamplerExp, MatchesStdExpWithinTwoUlpsOverTheSamplersRange) {
  double worst = 0;
  for (int i = 0; i <= 200000; ++i) {
    const double x = -45.0 * i / 200000.0;
    const double want = std::exp(x), got = SamplerExp(x);
    const double ulp = std::nextafter(want, 2 * want) - want;
    worst = std::max(worst, std::fabs(got - want) / ulp);
  }
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(SamplerExp(0.0), 1.0);
  EXPECT_EQ(SamplerExp(-1000.0), 0.0);
  EXPECT_TRUE(std::isnan(SamplerExp(std::numeric_limits<double>::quiet_NaN())));
}

TEST(SamplerExp, TemperatureExpIsTheScalarFormulaBitForBit) {
  // 1003 logits: the vector body and the scalar tail both run; a NaN, a -inf
  // and values under the floor and under min_p are among them.
  std::vector<float> logits(1003);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(std::sin(0.37 * i) * 20.0);
  logits[5] = std::numeric_limits<float>::quiet_NaN();
  logits[6] = -std::numeric_limits<float>::infinity();
  const double max = 20.0, temperature = 0.7, floor_logit = max - 30.0 * temperature, min_p = 1e-6;
  std::vector<double> p(logits.size());
  TemperatureExp(logits.data(), logits.size(), max, temperature, floor_logit, min_p, p.data());
  size_t under_floor = 0, under_min_p = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double l = static_cast<double>(logits[i]);
    const double e = SamplerExp((l - max) * (1.0 / temperature));
    const double want = !(l >= floor_logit) || e < min_p ? 0.0 : e;
    EXPECT_EQ(std::memcmp(&want, &p[i], sizeof(double)), 0) << "token " << i << ": " << p[i] << " vs " << want;
    under_floor += l < floor_logit;
    under_min_p += l >= floor_logit && e < min_p;
  }
  EXPECT_GT(under_floor, 10u);  // the floor did cut some tokens
  EXPECT_GT(under_min_p, 10u);  // and min_p others
  EXPECT_EQ(p[5], 0.0);         // NaN: never drawn
  EXPECT_EQ(p[6], 0.0);
}

// The loop ArgMax stands for.
size_t ReferenceArgMax(const std::vector<float>& l) {
  size_t best = 0;
  for (size_t t = 1; t < l.size(); ++t) {
    if (l[t] > l[best]) best = t;
  }
  return best;
}

TEST(SamplerScan, ArgMaxIsTheFirstMaximumSkippingNans) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> l(1000);
  for (size_t i = 0; i < l.size(); ++i) l[i] = static_cast<float>(std::cos(0.91 * i));
  const std::vector<std::vector<float>> cases = {
      l,
      {nan, 1.0f, 2.0f},                       // NaN first: index 0, like the loop
      {1.0f, nan, 3.0f, 3.0f, nan},            // ties: the first
      {-inf, -inf, -inf},                      // nothing finite
      {-0.0f, 0.0f, -1.0f},                    // signed zeros tie
      {0.5f},
  };
  for (const auto& c : cases) EXPECT_EQ(ArgMax(c.data(), c.size()), ReferenceArgMax(c));
  // A maximum in the vector body, then one in the tail, then a tie across them.
  for (size_t at : {3u, 500u, 991u, 999u}) {
    std::vector<float> m = l;
    m[at] = 7.0f;
    m[7] = nan;
    EXPECT_EQ(ArgMax(m.data(), m.size()), at);
  }
  std::vector<float> tie = l;
  tie[995] = tie[40] = 9.0f;
  EXPECT_EQ(ArgMax(tie.data(), tie.size()), 40u);
}

TEST(SamplerScan, CountNansCountsBodyAndTail) {
  std::vector<float> l(1001, 1.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i : {0u, 15u, 16u, 512u, 999u, 1000u}) l[i] = nan;
  l[3] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(CountNans(l.data(), l.size()), 6u);
  EXPECT_EQ(CountNans(l.data(), 0), 0u);
}

}  // namespace
}  // namespace llmserve::worker
