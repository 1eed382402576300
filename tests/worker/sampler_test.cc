#include "worker/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

namespace llmserve::worker {
namespace {

const std::vector<float> kLogits = {1.0f, 2.0f, 0.5f, -1.0f, 3.0f, 0.0f, 1.5f, -0.5f};

std::vector<double> Softmax(const std::vector<float>& l, double temperature) {
  std::vector<double> p(l.size());
  double mx = -1e30, sum = 0;
  for (float v : l) mx = std::max(mx, static_cast<double>(v));
  for (size_t i = 0; i < l.size(); ++i) sum += (p[i] = std::exp((l[i] - mx) / temperature));
  for (auto& v : p) v /= sum;
  return p;
}

// Draws n samples of `logits` (seed i, position 0) and returns the
// chi-square statistic against `expected` (probabilities; zero-probability
// tokens must never appear).
double ChiSquare(const std::vector<float>& logits, const SamplingParams& sp, const std::vector<double>& expected,
                 int n) {
  std::vector<int> count(logits.size(), 0);
  for (int i = 0; i < n; ++i) {
    SamplerRow row{logits.data(), &sp, nullptr, nullptr, static_cast<uint64_t>(i) * 7 + 3, 0};
    ++count[Sampler::SampleRow(row, logits.size()).token];
  }
  double chi = 0;
  for (size_t t = 0; t < expected.size(); ++t) {
    if (expected[t] == 0) {
      EXPECT_EQ(count[t], 0) << "token " << t << " is outside the allowed set";
      continue;
    }
    const double e = expected[t] * n;
    chi += (count[t] - e) * (count[t] - e) / e;
  }
  return chi;
}

double ChiSquare(const SamplingParams& sp, const std::vector<double>& expected, int n) {
  return ChiSquare(kLogits, sp, expected, n);
}

// 99.9% quantiles of chi-square with k degrees of freedom, k = 1..7.
const double kChi999[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32};

TEST(Sampler, TemperatureDistributionPassesChiSquare) {
  SamplingParams sp;
  sp.temperature = 0.8f;
  EXPECT_LT(ChiSquare(sp, Softmax(kLogits, 0.8), 20000), kChi999[7]);
}

TEST(Sampler, TopKTopPMinPRenormaliseTheKeptSet) {
  auto p = Softmax(kLogits, 1.0);
  {  // top_k 3: tokens 4, 1, 6.
    SamplingParams sp;
    sp.top_k = 3;
    std::vector<double> e(8, 0);
    const double z = p[4] + p[1] + p[6];
    e[4] = p[4] / z, e[1] = p[1] / z, e[6] = p[6] / z;
    EXPECT_LT(ChiSquare(sp, e, 20000), kChi999[2]);
  }
  {  // top_p 0.8: smallest best-first set reaching 0.8.
    SamplingParams sp;
    sp.top_p = 0.8f;
    std::vector<size_t> order = {4, 1, 6, 0, 2, 5, 7, 3};
    std::vector<double> e(8, 0);
    double acc = 0, z = 0;
    std::vector<size_t> kept;
    for (size_t t : order) {
      if (acc >= 0.8) break;
      acc += p[t];
      kept.push_back(t);
    }
    for (size_t t : kept) z += p[t];
    for (size_t t : kept) e[t] = p[t] / z;
    EXPECT_LT(ChiSquare(sp, e, 20000), kChi999[kept.size() - 1]);
  }
  {  // min_p 0.2: keep p ≥ 0.2 · p_max.
    SamplingParams sp;
    sp.min_p = 0.2f;
    std::vector<double> e(8, 0);
    double z = 0;
    for (size_t t = 0; t < 8; ++t) {
      if (p[t] >= 0.2 * p[4]) z += p[t];
    }
    int kept = 0;
    for (size_t t = 0; t < 8; ++t) {
      if (p[t] >= 0.2 * p[4]) e[t] = p[t] / z, ++kept;
    }
    EXPECT_LT(ChiSquare(sp, e, 20000), kChi999[kept - 1]);
  }
}

TEST(Sampler, WideRowsSampleTheKeptSetsDistribution) {
  // 600 tokens (three draw chunks); 8 of them well above the rest, in pairs
  // of equal logits (ties go to the lower id).
  std::vector<float> l(600, -6.0f);
  const std::vector<int32_t> high = {3, 250, 251, 300, 511, 512, 513, 599};
  for (size_t i = 0; i < high.size(); ++i) l[high[i]] = 1.0f + 0.25f * static_cast<float>(i % 4);
  std::vector<double> e(l.size());
  for (size_t t = 0; t < l.size(); ++t) e[t] = std::exp(static_cast<double>(l[t]));
  const std::vector<int32_t> order = {300, 599, 251, 513, 250, 512, 3, 511};  // best first
  {  // top_k 5 (the compact path): the five best, renormalised.
    SamplingParams sp;
    sp.top_k = 5;
    std::vector<double> want(l.size(), 0.0);
    double z = 0;
    for (size_t i = 0; i < 5; ++i) z += e[order[i]];
    for (size_t i = 0; i < 5; ++i) want[order[i]] = e[order[i]] / z;
    EXPECT_LT(ChiSquare(l, sp, want, 20000), kChi999[4]);
  }
  {  // top_p 0.7 over the whole row (the bucket path): a best-first prefix.
    SamplingParams sp;
    sp.top_p = 0.7f;
    double total = 0;
    for (double v : e) total += v;
    std::vector<double> want(l.size(), 0.0);
    double acc = 0;
    size_t kept = 0;
    while (acc < 0.7 * total) acc += e[order[kept++]];
    for (size_t i = 0; i < kept; ++i) want[order[i]] = e[order[i]] / acc;
    ASSERT_LT(kept, high.size());  // the cut falls among the high tokens
    EXPECT_LT(ChiSquare(l, sp, want, 20000), kChi999[kept - 1]);
  }
}

TEST(Sampler, GreedyPenaltiesBiasAndAllowedIds) {
  SamplingParams sp;
  sp.temperature = 0;
  SamplerRow row{kLogits.data(), &sp, nullptr, nullptr, 0, 0};
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 4);
  sp.logit_bias = {{2, 10.0f}};
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 2);
  sp.logit_bias.clear();
  sp.allowed_token_ids = {0, 5, 7};
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 0);
  sp.allowed_token_ids.clear();
  // Repetition penalty 2 on token 4 (3.0 -> 1.5, prompt) leaves token 1 (2.0) best.
  std::vector<int32_t> prompt = {4}, output;
  row.prompt_tokens = &prompt;
  row.output_tokens = &output;
  sp.repetition_penalty = 2.0f;
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 1);
  sp.repetition_penalty = 1.0f;
  // Frequency 0.6 × 2 occurrences of 4 (3.0 -> 1.8) < 2.0 of token 1.
  output = {4, 4};
  sp.frequency_penalty = 0.6f;
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 1);
  sp.frequency_penalty = 0;
  sp.presence_penalty = 1.1f;  // 3.0 -> 1.9 < 2.0
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 1);
  sp.presence_penalty = 0.9f;  // 3.0 -> 2.1 > 2.0
  EXPECT_EQ(Sampler::SampleRow(row, 8).token, 4);
}

TEST(Sampler, LogprobsAreRawLogSoftmaxWithTopCandidates) {
  SamplingParams sp;
  sp.temperature = 0;
  sp.logprobs = 3;
  sp.logit_bias = {{2, 10.0f}};  // changes the choice, not the raw logprobs
  SamplerRow row{kLogits.data(), &sp, nullptr, nullptr, 0, 0};
  const auto r = Sampler::SampleRow(row, 8);
  const auto p = Softmax(kLogits, 1.0);
  EXPECT_EQ(r.token, 2);
  EXPECT_NEAR(r.logprob, std::log(p[2]), 1e-6);
  EXPECT_EQ(r.rank, 5);  // four raw logits (3.0, 2.0, 1.5, 1.0) beat 0.5
  ASSERT_EQ(r.top.size(), 3u);
  EXPECT_EQ(r.top[0].first, 4);
  EXPECT_EQ(r.top[1].first, 1);
  EXPECT_EQ(r.top[2].first, 6);
  EXPECT_NEAR(r.top[0].second, std::log(p[4]), 1e-6);
}

TEST(Sampler, GrammarMaskLimitsTheDrawAndTheLogprobs) {
  // Allowed: tokens 0, 2, 5 (bits 0, 2, 5 of the one word).
  const int32_t mask[1] = {0b100101};
  SamplingParams sp;
  sp.temperature = 1.0f;
  std::vector<double> expected = Softmax({kLogits[0], kLogits[2], kLogits[5]}, 1.0);
  expected = {expected[0], 0, expected[1], 0, 0, expected[2], 0, 0};
  int count[8] = {};
  double chi = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    SamplerRow row{kLogits.data(), &sp, nullptr, nullptr, static_cast<uint64_t>(i) * 7 + 3, 0};
    row.grammar_mask = mask;
    row.grammar_mask_words = 1;
    ++count[Sampler::SampleRow(row, 8).token];
  }
  for (int t = 0; t < 8; ++t) {
    if (expected[static_cast<size_t>(t)] == 0) {
      EXPECT_EQ(count[t], 0) << "token " << t << " is outside the grammar";
      continue;
    }
    const double e = expected[static_cast<size_t>(t)] * n;
    chi += (count[t] - e) * (count[t] - e) / e;
  }
  EXPECT_LT(chi, kChi999[2]);
  // Greedy picks the best allowed token; logprobs are over the allowed set (vLLM
  // masks the logits before the sampler computes them).
  sp.temperature = 0;
  sp.logprobs = 1;
  SamplerRow row{kLogits.data(), &sp, nullptr, nullptr, 0, 0};
  row.grammar_mask = mask;
  row.grammar_mask_words = 1;
  const auto r = Sampler::SampleRow(row, 8);
  EXPECT_EQ(r.token, 0);
  EXPECT_NEAR(r.logprob, std::log(Softmax({kLogits[0], kLogits[2], kLogits[5]}, 1.0)[0]), 1e-6);
  EXPECT_EQ(r.rank, 1);
  // Four alternatives asked, three allowed: the fourth is a forbidden token at -inf.
  sp.logprobs = 4;
  const auto four = Sampler::SampleRow(row, 8);
  ASSERT_EQ(four.top.size(), 4u);
  EXPECT_EQ(four.top[3].first, 1);
  EXPECT_EQ(four.top[3].second, -std::numeric_limits<float>::infinity());
}

TEST(Sampler, SeedsReproduceAcrossBatchCompositions) {
  SamplingParams a, b, c;
  a.seed = 1234;
  a.temperature = 1.3f;
  b.temperature = 0.9f;
  c.seed = 99;
  c.top_k = 4;
  Sampler sampler(/*process_seed=*/42);
  kernels::cpu::ThreadPool pool(2);
  std::vector<int32_t> alone, mixed;
  for (uint64_t pos = 0; pos < 50; ++pos) {
    SamplerRow ra{kLogits.data(), &a, nullptr, nullptr, sampler.EffectiveSeed(a, "a"), pos};
    SamplerRow rb{kLogits.data(), &b, nullptr, nullptr, sampler.EffectiveSeed(b, "b"), pos};
    SamplerRow rc{kLogits.data(), &c, nullptr, nullptr, sampler.EffectiveSeed(c, "c"), pos};
    alone.push_back(sampler.Sample({ra}, 8, pool)[0].token);
    mixed.push_back(sampler.Sample({rb, rc, ra, rb}, 8, pool)[2].token);
  }
  EXPECT_EQ(alone, mixed);
  // A different seed gives a different sequence; the same seed in a new sampler the same one.
  Sampler other(7);
  std::vector<int32_t> again, different;
  SamplingParams d = a;
  d.seed = 1235;
  for (uint64_t pos = 0; pos < 50; ++pos) {
    again.push_back(Sampler::SampleRow({kLogits.data(), &a, nullptr, nullptr, other.EffectiveSeed(a, "zz"), pos}, 8).token);
    different.push_back(Sampler::SampleRow({kLogits.data(), &d, nullptr, nullptr, other.EffectiveSeed(d, "a"), pos}, 8).token);
  }
  EXPECT_EQ(again, alone);
  EXPECT_NE(different, alone);
  // Unseeded requests differ by request id and by process seed.
  EXPECT_NE(sampler.EffectiveSeed(b, "x"), sampler.EffectiveSeed(b, "y"));
  EXPECT_NE(sampler.EffectiveSeed(b, "x"), other.EffectiveSeed(b, "x"));
}

}  // namespace
}  // namespace llmserve::worker
