// The periodic stats line: vLLM's format, per-interval throughputs, the hit
// rate over the interval's queries, and idle lines marked for DEBUG.
#include "frontend/metrics/stats_log.h"

#include "frontend/metrics/frontend_metrics.h"

#include <gtest/gtest.h>

namespace llmserve::frontend::metrics {
namespace {

EngineSnapshot At(uint32_t engine, double prompt, double generated, double queries, double hits) {
  EngineSnapshot s;
  s.engine = engine;
  s.running = 3;
  s.waiting = 1;
  s.kv_usage = 0.125;
  s.prompt_tokens = prompt;
  s.generation_tokens = generated;
  s.prefix_queries = queries;
  s.prefix_hits = hits;
  return s;
}

TEST(StatsLog, PrintsVllmsLinePerEngineWithIntervalThroughputs) {
  StatsLog log;
  auto lines = log.Lines({At(0, 100, 50, 80, 20), At(1, 0, 0, 0, 0)}, 10.0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text,
            "Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 5.0 tokens/s, "
            "Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 12.5%, Prefix cache hit rate: 25.0%");
  EXPECT_FALSE(lines[0].idle);
  EXPECT_FALSE(lines[1].idle);  // the first interval is never idle
  // The next interval counts only what happened in it; no queries keep the last rate.
  lines = log.Lines({At(0, 100, 70, 80, 20), At(1, 0, 0, 0, 0)}, 4.0);
  EXPECT_NE(lines[0].text.find("Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 5.0 tokens/s"),
            std::string::npos);
  EXPECT_NE(lines[0].text.find("Prefix cache hit rate: 25.0%"), std::string::npos);
  EXPECT_FALSE(lines[0].idle);
  EXPECT_TRUE(lines[1].idle);  // no tokens now nor before
  lines = log.Lines({At(0, 100, 70, 80, 20)}, 4.0);
  EXPECT_FALSE(lines[0].idle);  // tokens in the interval before: still shown once
  lines = log.Lines({At(0, 100, 70, 80, 20)}, 4.0);
  EXPECT_TRUE(lines[0].idle);
}

TEST(StatsLog, PrefixesEachLine) {
  StatsLog log("API server 1: ");
  auto lines = log.Lines({At(2, 0, 0, 0, 0)}, 1.0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text.rfind("API server 1: Engine 002: ", 0), 0u);
}

TEST(StatsLog, SpecDecodingLineFollowsTheEngineLineWithIntervalFigures) {
  FrontendMetrics metrics(FrontendMetricsConfig{"m", {0}});
  proto::SchedulerStats stats;
  stats.num_running_reqs = 1;
  proto::SpecDecodingStats& spec = stats.spec_decoding_stats.emplace();
  spec.num_spec_tokens = 3;
  spec.num_drafts = 100;
  spec.num_draft_tokens = 300;
  spec.num_accepted_tokens = 140;
  spec.num_accepted_tokens_per_pos = {80, 40, 20};
  metrics.RecordSchedulerStats(0, stats);
  metrics.RecordGenerationTokens(0, 240);
  StatsLog log;
  auto lines = log.Lines(metrics.Snapshot(), 10.0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text.rfind("Engine 000: ", 0), 0u);
  EXPECT_EQ(lines[1].text,
            "SpecDecoding metrics: Mean acceptance length: 2.40, Accepted throughput: 14.00 tokens/s, "
            "Drafted throughput: 30.00 tokens/s, Accepted: 140 tokens, Drafted: 300 tokens, "
            "Per-position acceptance rate: 0.800, 0.400, 0.200, Avg Draft acceptance rate: 46.7%");
  // The next interval: only its own counts (10 runs, 30 drafted, 5 accepted all at position 0).
  spec.num_drafts = 10;
  spec.num_draft_tokens = 30;
  spec.num_accepted_tokens = 5;
  spec.num_accepted_tokens_per_pos = {5, 0, 0};
  metrics.RecordSchedulerStats(0, stats);
  lines = log.Lines(metrics.Snapshot(), 5.0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].text,
            "SpecDecoding metrics: Mean acceptance length: 1.50, Accepted throughput: 1.00 tokens/s, "
            "Drafted throughput: 6.00 tokens/s, Accepted: 5 tokens, Drafted: 30 tokens, "
            "Per-position acceptance rate: 0.500, 0.000, 0.000, Avg Draft acceptance rate: 16.7%");
  // An interval without verified drafts prints no spec line (as vLLM).
  spec = proto::SpecDecodingStats{};
  spec.num_spec_tokens = 3;
  spec.num_accepted_tokens_per_pos = {0, 0, 0};
  metrics.RecordSchedulerStats(0, stats);
  lines = log.Lines(metrics.Snapshot(), 5.0);
  EXPECT_EQ(lines.size(), 1u);
}

TEST(StatsLog, NoSpecDecodingLineForAnEngineThatDoesNotSpeculate) {
  FrontendMetrics metrics(FrontendMetricsConfig{"m", {0, 1}});
  proto::SchedulerStats plain;
  metrics.RecordSchedulerStats(0, plain);
  proto::SchedulerStats speculating;
  speculating.spec_decoding_stats.emplace().num_drafts = 2;
  speculating.spec_decoding_stats->num_draft_tokens = 4;
  speculating.spec_decoding_stats->num_spec_tokens = 2;
  metrics.RecordSchedulerStats(1, speculating);
  StatsLog log;
  const auto lines = log.Lines(metrics.Snapshot(), 1.0);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].text.rfind("Engine 000: ", 0), 0u);
  EXPECT_EQ(lines[1].text.rfind("Engine 001: ", 0), 0u);
  EXPECT_NE(lines[2].text.find("Mean acceptance length: 1.00"), std::string::npos);
  EXPECT_NE(lines[2].text.find("Per-position acceptance rate: 0.000, 0.000, Avg"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::frontend::metrics
