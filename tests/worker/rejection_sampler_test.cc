// The rejection sampler: greedy verification is exact-match, and at
// temperature 1 the emitted token follows the target distribution whatever
// the draft (chi-square over 10^5 seeded draws).
#include "worker/rejection_sampler.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace llmserve::worker {
namespace rejection_sampler_test {

constexpr size_t kVocab = 8;

// Logits of row j: a distinct, uneven distribution per row.
std::vector<float> Logits(size_t rows) {
  std::vector<float> l(rows * kVocab);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t t = 0; t < kVocab; ++t) l[r * kVocab + t] = static_cast<float>(((t * 5 + r * 3) % kVocab)) * 0.45f;
  }
  return l;
}

std::vector<SamplerRow> Rows(const std::vector<float>& logits, const SamplingParams& sp, uint64_t seed) {
  std::vector<SamplerRow> rows(logits.size() / kVocab);
  for (size_t j = 0; j < rows.size(); ++j) {
    rows[j].logits = logits.data() + j * kVocab;
    rows[j].params = &sp;
    rows[j].seed = seed;
    rows[j].output_position = 10 + j;
  }
  return rows;
}

std::vector<int32_t> Tokens(const std::vector<SampledToken>& s) {
  std::vector<int32_t> t;
  for (const auto& x : s) t.push_back(x.token);
  return t;
}

size_t ArgMax(const float* l) { return static_cast<size_t>(std::max_element(l, l + kVocab) - l); }

TEST(RejectionSampler, GreedyAcceptsWhileDraftsAreTheArgmax) {
  const std::vector<float> logits = Logits(4);
  SamplingParams sp;
  sp.temperature = 0;
  const auto rows = Rows(logits, sp, 1);
  const auto a0 = static_cast<int32_t>(ArgMax(&logits[0])), a1 = static_cast<int32_t>(ArgMax(&logits[kVocab]));
  const auto a2 = static_cast<int32_t>(ArgMax(&logits[2 * kVocab])), a3 = static_cast<int32_t>(ArgMax(&logits[3 * kVocab]));
  const int32_t wrong = (a1 + 1) % static_cast<int32_t>(kVocab);
  // Every draft right: the drafts and the bonus token.
  EXPECT_EQ(Tokens(RejectionSample(rows, std::vector<int32_t>{a0, a1, a2}, kVocab)),
            (std::vector<int32_t>{a0, a1, a2, a3}));
  // The second draft wrong: the target's token there, then stop.
  EXPECT_EQ(Tokens(RejectionSample(rows, std::vector<int32_t>{a0, wrong, a2}, kVocab)),
            (std::vector<int32_t>{a0, a1}));
  // No drafts: the bonus row alone, as the plain sampler.
  EXPECT_EQ(Tokens(RejectionSample(std::span(rows).first(1), std::vector<int32_t>{}, kVocab)),
            (std::vector<int32_t>{a0}));
}

TEST(RejectionSampler, LogprobsOfAcceptedTokens) {
  const std::vector<float> logits = Logits(2);
  SamplingParams sp;
  sp.temperature = 0;
  sp.logprobs = 2;
  const auto rows = Rows(logits, sp, 1);
  const auto out = RejectionSample(rows, std::vector<int32_t>{static_cast<int32_t>(ArgMax(&logits[0]))}, kVocab);
  ASSERT_EQ(out.size(), 2u);
  for (size_t j = 0; j < 2; ++j) {
    EXPECT_EQ(out[j].rank, 1);
    EXPECT_EQ(out[j].top.size(), 2u);
    EXPECT_LT(out[j].logprob, 0.0f);
  }
}

// The softmax of row `r` at temperature 1.
std::vector<double> Softmax(const float* l) {
  std::vector<double> p(kVocab);
  double total = 0;
  for (size_t t = 0; t < kVocab; ++t) total += p[t] = std::exp(static_cast<double>(l[t]));
  for (double& v : p) v /= total;
  return p;
}

double ChiSquare(const std::vector<int64_t>& counts, const std::vector<double>& p, int64_t n) {
  double chi = 0;
  for (size_t t = 0; t < p.size(); ++t) {
    const double want = p[t] * static_cast<double>(n);
    chi += (static_cast<double>(counts[t]) - want) * (static_cast<double>(counts[t]) - want) / want;
  }
  return chi;
}

// 7 degrees of freedom: chi-square at p = 0.01.
constexpr double kChiSquare7At001 = 18.475;

TEST(RejectionSampler, RandomOutputFollowsTheTargetForAFarDraft) {
  const std::vector<float> logits = Logits(3);
  SamplingParams sp;
  sp.temperature = 1.0f;
  const std::vector<double> p0 = Softmax(&logits[0]), p1 = Softmax(&logits[kVocab]);
  // Drafts: the least likely token first (far from the target), then the likeliest.
  const auto far = static_cast<int32_t>(std::min_element(p0.begin(), p0.end()) - p0.begin());
  const auto near = static_cast<int32_t>(std::max_element(p1.begin(), p1.end()) - p1.begin());
  constexpr int64_t kDraws = 100000;
  std::vector<int64_t> first(kVocab, 0), second(kVocab, 0);
  int64_t accepted_first = 0, reached_second = 0;
  for (int64_t s = 0; s < kDraws; ++s) {
    const auto rows = Rows(logits, sp, static_cast<uint64_t>(s) * 7919 + 1);
    const auto out = RejectionSample(rows, std::vector<int32_t>{far, near}, kVocab);
    ASSERT_GE(out.size(), 1u);
    ++first[static_cast<size_t>(out[0].token)];
    if (out[0].token == far) {
      ++accepted_first;
      ASSERT_GE(out.size(), 2u);
      ++second[static_cast<size_t>(out[1].token)];
      ++reached_second;
    }
  }
  EXPECT_LT(ChiSquare(first, p0, kDraws), kChiSquare7At001);
  // Acceptance happens as often as the target picks the draft.
  EXPECT_NEAR(static_cast<double>(accepted_first) / kDraws, p0[static_cast<size_t>(far)], 0.004);
  ASSERT_GT(reached_second, 1000);
  EXPECT_LT(ChiSquare(second, p1, reached_second), kChiSquare7At001);
}

TEST(RejectionSampler, RandomWithTopKNeverEmitsADroppedDraft) {
  const std::vector<float> logits = Logits(2);
  SamplingParams sp;
  sp.temperature = 1.0f;
  sp.top_k = 3;
  const size_t worst = static_cast<size_t>(std::min_element(logits.begin(), logits.begin() + kVocab) - logits.begin());
  std::vector<float> sorted(logits.begin(), logits.begin() + kVocab);
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t s = 1; s <= 2000; ++s) {
    const auto out = RejectionSample(Rows(logits, sp, s), std::vector<int32_t>{static_cast<int32_t>(worst)}, kVocab);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_GE(logits[static_cast<size_t>(out[0].token)], sorted[kVocab - 3]);
  }
}

TEST(RejectionSampler, SeededDrawsReproduce) {
  const std::vector<float> logits = Logits(4);
  SamplingParams sp;
  sp.temperature = 0.8f;
  const std::vector<int32_t> drafts = {1, 2, 3};
  for (uint64_t s = 1; s < 50; ++s) {
    EXPECT_EQ(Tokens(RejectionSample(Rows(logits, sp, s), drafts, kVocab)),
              Tokens(RejectionSample(Rows(logits, sp, s), drafts, kVocab)));
  }
}

}  // namespace rejection_sampler_test
}  // namespace llmserve::worker
