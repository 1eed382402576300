// Statistics of `llmserve bench serve` on hand-made timings.
#include "deploy/bench/metrics.h"

#include <gtest/gtest.h>

namespace llmserve::deploy::bench {
namespace {

RequestOutput Ok(double start, double ttft, std::vector<double> itl, int64_t prompt, int64_t out) {
  RequestOutput o;
  o.success = true;
  o.start_time = start;
  o.ttft = ttft;
  o.itl = std::move(itl);
  o.latency = ttft;
  for (double g : o.itl) o.latency += g;
  o.prompt_len = prompt;
  o.output_tokens = out;
  return o;
}

TEST(BenchMetrics, PercentileInterpolatesLikeNumpy) {
  EXPECT_DOUBLE_EQ(Percentile({}, 99), 0);
  EXPECT_DOUBLE_EQ(Percentile({5}, 99), 5);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 50), 2.5);   // numpy.median([1,2,3,4])
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 99), 3.97);  // 1 + 0.99*3 = rank 2.97
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 100), 4);
  EXPECT_DOUBLE_EQ(Percentile({10, 20, 30, 40, 50}, 25), 20);
}

TEST(BenchMetrics, SummarizeReportsMillisecondsAndPopulationStd) {
  const MetricStats s = Summarize({0.1, 0.2, 0.3, 0.4}, {50, 99});
  EXPECT_NEAR(s.mean_ms, 250, 1e-9);
  EXPECT_NEAR(s.median_ms, 250, 1e-9);
  EXPECT_NEAR(s.std_ms, 111.80339887498948, 1e-9);  // numpy.std (ddof=0)
  ASSERT_EQ(s.percentiles_ms.size(), 2u);
  EXPECT_NEAR(s.percentiles_ms[1].second, 397, 1e-9);
}

TEST(BenchMetrics, TpotItlE2eAndThroughputFollowVllm) {
  std::vector<RequestOutput> outs;
  // 4 tokens: TTFT 0.5, gaps 0.1 0.2 0.3 -> E2E 1.1, TPOT (1.1-0.5)/3 = 0.2
  outs.push_back(Ok(0.0, 0.5, {0.1, 0.2, 0.3}, 10, 4));
  // 1 token: no TPOT entry (but TPOT 0 for goodput), E2E = TTFT
  outs.push_back(Ok(0.2, 0.3, {}, 20, 1));
  RequestOutput bad;
  bad.error = "HTTP 500";
  outs.push_back(bad);
  const BenchmarkMetrics m = ComputeMetrics(outs, 2.0, {99}, {});
  EXPECT_EQ(m.completed, 2);
  EXPECT_EQ(m.failed, 1);
  EXPECT_EQ(m.total_input, 30);
  EXPECT_EQ(m.total_output, 5);
  EXPECT_EQ(m.output_lens, (std::vector<int64_t>{4, 1, 0}));
  EXPECT_DOUBLE_EQ(m.request_throughput, 1.0);
  EXPECT_DOUBLE_EQ(m.output_throughput, 2.5);
  EXPECT_DOUBLE_EQ(m.total_token_throughput, 17.5);
  EXPECT_NEAR(m.tpot.mean_ms, 200, 1e-9);
  EXPECT_NEAR(m.ttft.mean_ms, 400, 1e-9);
  EXPECT_NEAR(m.itl.mean_ms, 200, 1e-9);       // pooled gaps 0.1 0.2 0.3
  EXPECT_NEAR(m.itl.median_ms, 200, 1e-9);
  EXPECT_NEAR(m.e2el.mean_ms, (1100 + 300) / 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(m.request_goodput, 0);  // no SLO given
  EXPECT_EQ(m.max_concurrent_requests, 2);  // [0,1.1) and [0.2,0.5) overlap
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 4);  // chunks at 0.5 0.6 0.8 (and 0.5) in second 0; 1.1 in second 1
}

TEST(BenchMetrics, GoodputCountsRequestsMeetingEverySlo) {
  std::vector<RequestOutput> outs = {
      Ok(0, 0.1, {0.05, 0.05}, 1, 3),   // ttft 100, tpot 50, e2el 200
      Ok(0, 0.3, {0.05, 0.05}, 1, 3),   // ttft 300
      Ok(0, 0.1, {0.2, 0.2}, 1, 3),     // tpot 200, e2el 500
      Ok(0, 0.1, {}, 1, 1),             // single token: tpot counts as 0
  };
  auto slo = ParseGoodput({"ttft:200", "tpot:100"});
  ASSERT_TRUE(slo.ok());
  EXPECT_DOUBLE_EQ(ComputeMetrics(outs, 2.0, {}, *slo).request_goodput, 1.0);  // 1st and 4th, over 2 s
  auto e2e = ParseGoodput({"e2el:250"});
  ASSERT_TRUE(e2e.ok());
  EXPECT_DOUBLE_EQ(ComputeMetrics(outs, 1.0, {}, *e2e).request_goodput, 2.0);
}

TEST(BenchMetrics, ParseGoodputRejectsBadPairs) {
  EXPECT_FALSE(ParseGoodput({"ttft"}).ok());
  EXPECT_FALSE(ParseGoodput({"latency:5"}).ok());
  EXPECT_FALSE(ParseGoodput({"ttft:-1"}).ok());
  EXPECT_FALSE(ParseGoodput({"ttft:abc"}).ok());
  auto ok = ParseGoodput({"e2el:1.5"});
  ASSERT_TRUE(ok.ok());
  EXPECT_DOUBLE_EQ(*ok->e2el_ms, 1.5);
  EXPECT_FALSE(ok->ttft_ms.has_value());
}

TEST(BenchMetrics, AllFailedGivesZeros) {
  RequestOutput bad;
  const BenchmarkMetrics m = ComputeMetrics({bad, bad}, 1.0, {99}, {});
  EXPECT_EQ(m.completed, 0);
  EXPECT_EQ(m.failed, 2);
  EXPECT_DOUBLE_EQ(m.ttft.mean_ms, 0);
  EXPECT_DOUBLE_EQ(m.ttft.percentiles_ms[0].second, 0);
  EXPECT_DOUBLE_EQ(m.max_output_tokens_per_s, 0);
}

}  // namespace
}  // namespace llmserve::deploy::bench
