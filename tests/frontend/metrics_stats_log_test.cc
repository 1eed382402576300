// The periodic stats line: vLLM's format, per-interval throughputs, the hit
// rate over the interval's queries, and idle lines marked for DEBUG.
#include "frontend/metrics/stats_log.h"

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

}  // namespace
}  // namespace llmserve::frontend::metrics
