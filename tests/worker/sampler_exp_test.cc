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
  // and values under the floor are among them.
  std::vector<float> logits(1003);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(std::sin(0.37 * i) * 20.0);
  logits[5] = std::numeric_limits<float>::quiet_NaN();
  logits[6] = -std::numeric_limits<float>::infinity();
  const double max = 20.0, temperature = 0.7, floor_logit = max - 30.0 * temperature;
  std::vector<double> p(logits.size());
  TemperatureExp(logits.data(), logits.size(), max, temperature, floor_logit, p.data());
  size_t zeros = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double l = static_cast<double>(logits[i]);
    const double want = l < floor_logit ? 0.0 : SamplerExp((l - max) / temperature);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(p[i])) << i;
      continue;
    }
    EXPECT_EQ(std::memcmp(&want, &p[i], sizeof(double)), 0) << "token " << i << ": " << p[i] << " vs " << want;
    zeros += want == 0.0;
  }
  EXPECT_GT(zeros, 10u);  // the floor did cut some tokens
  EXPECT_TRUE(std::isnan(p[5]));
  EXPECT_EQ(p[6], 0.0);
}

}  // namespace
}  // namespace llmserve::worker
