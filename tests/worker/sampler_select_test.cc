#include "worker/sampler_select.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>


namespace llmserve::worker {
namespace {

// Random logits with ties (values on a 0.01 grid), a NaN and a -inf.
std::vector<float> RandomLogits(size_t n, uint32_t seed, float spread) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> grid(0, static_cast<int>(spread * 100));
  std::vector<float> l(n);
  for (float& v : l) v = static_cast<float>(grid(rng)) * 0.01f;
  l[n / 3] = std::numeric_limits<float>::quiet_NaN();
  l[n / 2] = -std::numeric_limits<float>::infinity();
  return l;
}

// Token ids with a finite logit, best first (higher logit, then lower id).
std::vector<int32_t> BestFirst(const std::vector<float>& l) {
  std::vector<int32_t> ids;
  for (size_t t = 0; t < l.size(); ++t) {
    if (std::isfinite(l[t])) ids.push_back(static_cast<int32_t>(t));
  }
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  return ids;
}

TEST(SamplerSelect, TopKIsTheBestFirstPrefixOfAFullSort) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto l = RandomLogits(5003, seed, 20.0f);  // ~2000 grid values: many ties
    const auto order = BestFirst(l);
    for (size_t k : {size_t{1}, size_t{5}, size_t{100}, size_t{4999}, size_t{6000}}) {
      const auto best = TopK(l.data(), l.size(), k);
      ASSERT_EQ(best.size(), std::min(k, order.size())) << "k " << k;
      for (size_t i = 0; i < best.size(); ++i) {
        ASSERT_EQ(best[i].second, order[i]) << "k " << k << " rank " << i;
        ASSERT_EQ(best[i].first, l[order[i]]);
      }
    }
  }
}

TEST(SamplerSelect, DropAfterKeepsExactlyTheTokensAtOrBeforeTheCut) {
  const auto l = RandomLogits(1001, 7, 3.0f);  // 300 grid values: ties across the cut
  const auto order = BestFirst(l);
  const size_t at = 400;
  const Cut cut{l[order[at]], order[at]};
  std::vector<double> p(l.size(), 1.0);
  DropAfter(l.data(), l.size(), cut, p.data());
  std::vector<double> want(l.size(), 0.0);
  for (size_t i = 0; i <= at; ++i) want[order[i]] = 1.0;
  EXPECT_EQ(p, want);
}

// The reference top-p cut: best first, add p until the sum reaches want.
int32_t ReferenceTopP(const std::vector<float>& l, const std::vector<double>& p, double want) {
  double acc = 0;
  int32_t last = -1;
  for (int32_t t : BestFirst(l)) {
    if (p[t] <= 0) continue;
    last = t;
    acc += p[t];
    if (acc >= want) break;
  }
  return last;
}

TEST(SamplerSelect, TopPCutMatchesASortedScan) {
  for (uint32_t seed : {11u, 12u, 13u}) {
    for (float spread : {0.5f, 8.0f, 40.0f}) {  // flat to peaked rows
      const auto l = RandomLogits(20000, seed, spread);
      float mx = -INFINITY;
      for (float v : l) mx = std::isnan(v) ? mx : std::max(mx, v);
      std::vector<double> p(l.size());
      double total = 0;
      const float lo = mx - 30.0f;
      for (size_t t = 0; t < l.size(); ++t) {
        p[t] = l[t] >= lo ? std::exp(static_cast<double>(l[t]) - mx) : 0.0;
        total += p[t];
      }
      for (double top_p : {0.05, 0.5, 0.9, 0.999}) {
        const Cut cut = TopPCut(l.data(), p.data(), l.size(), top_p * total, lo, mx);
        const int32_t want = ReferenceTopP(l, p, top_p * total);
        EXPECT_EQ(cut.token, want) << "seed " << seed << " spread " << spread << " top_p " << top_p;
        EXPECT_EQ(cut.logit, l[want]);
      }
    }
  }
}

TEST(SamplerSelect, DrawPicksTheTokenWhoseIntervalHoldsTheTarget) {
  // 1000 tokens (four chunks), some zero: a scan of the running sum in id
  // order is the reference.
  std::vector<double> p(1000);
  std::mt19937 rng(5);
  for (size_t t = 0; t < p.size(); ++t) p[t] = t % 7 == 3 ? 0.0 : std::uniform_real_distribution<double>(0, 1)(rng);
  const Draw draw(p.data(), p.size());
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  EXPECT_NEAR(draw.total(), total, 1e-12 * total);
  for (int i = 0; i < 2000; ++i) {
    const double u = (i + 0.5) / 2000;
    double acc = 0;
    int32_t want = -1;
    for (size_t t = 0; t < p.size(); ++t) {
      acc += p[t];
      if (u * draw.total() < acc) {
        want = static_cast<int32_t>(t);
        break;
      }
    }
    const int32_t got = draw.Pick(u);
    EXPECT_GT(p[got], 0.0);
    // Rounding may move a target on an interval's edge to the neighbour.
    if (got != want) {
      EXPECT_LT(std::fabs(acc - u * draw.total()), 1e-9) << "u " << u;
    }
  }
  EXPECT_EQ(draw.Pick(0.0), 0);
  EXPECT_EQ(draw.Pick(std::nextafter(1.0, 0.0)), 999);
}

}  // namespace
}  // namespace llmserve::worker
