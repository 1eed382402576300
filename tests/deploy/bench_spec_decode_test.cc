// `llmserve bench serve`'s speculative decoding figures: the counters read
// from a real /metrics scrape (FrontendMetrics' text), their difference over a
// run, and the table section and JSON keys vLLM's bench prints.
#include <gtest/gtest.h>

#include "deploy/bench/report.h"
#include "deploy/bench/spec_decode_stats.h"
#include "frontend/metrics/frontend_metrics.h"

namespace llmserve::deploy::bench {
namespace {

proto::SchedulerStats SpecStatsReport(int64_t drafts, int64_t drafted, int64_t accepted, std::vector<int64_t> per_pos) {
  proto::SchedulerStats s;
  proto::SpecDecodingStats& d = s.spec_decoding_stats.emplace();
  d.num_spec_tokens = static_cast<int32_t>(per_pos.size());
  d.num_drafts = drafts;
  d.num_draft_tokens = drafted;
  d.num_accepted_tokens = accepted;
  d.num_accepted_tokens_per_pos = std::move(per_pos);
  return s;
}

TEST(BenchSpecDecode, CountersAreSummedOverEnginesFromARealScrape) {
  frontend::metrics::FrontendMetrics server(frontend::metrics::FrontendMetricsConfig{"model a", {0, 1}});
  server.RecordSchedulerStats(0, SpecStatsReport(10, 30, 12, {7, 4, 1}));
  server.RecordSchedulerStats(1, SpecStatsReport(5, 15, 3, {3, 0, 0}));
  const auto c = ParseSpecDecodeCounters(server.Render());
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->num_drafts, 15);
  EXPECT_EQ(c->num_draft_tokens, 45);
  EXPECT_EQ(c->num_accepted_tokens, 15);
  EXPECT_EQ(c->accepted_per_pos, (std::map<int, double>{{0, 10}, {1, 4}, {2, 1}}));
}

TEST(BenchSpecDecode, NoCountersWithoutSpeculation) {
  frontend::metrics::FrontendMetrics server(frontend::metrics::FrontendMetricsConfig{"m", {0}});
  server.RecordSchedulerStats(0, proto::SchedulerStats{});
  EXPECT_FALSE(ParseSpecDecodeCounters(server.Render()).has_value());
  EXPECT_FALSE(SummarizeSpecDecode(std::nullopt, SpecDecodeCounters{}).has_value());
}

TEST(BenchSpecDecode, TheRunsFiguresAreTheDifference) {
  frontend::metrics::FrontendMetrics server(frontend::metrics::FrontendMetricsConfig{"m", {0}});
  server.RecordSchedulerStats(0, SpecStatsReport(100, 300, 250, {90, 90, 70}));  // before the run (e.g. warm-up)
  const auto before = ParseSpecDecodeCounters(server.Render());
  // Nothing verified in between: no figures (vLLM's bench prints none).
  EXPECT_FALSE(SummarizeSpecDecode(before, before).has_value());
  server.RecordSchedulerStats(0, SpecStatsReport(20, 60, 30, {16, 10, 4}));
  const auto s = SummarizeSpecDecode(before, ParseSpecDecodeCounters(server.Render()));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->num_drafts, 20);
  EXPECT_EQ(s->draft_tokens, 60);
  EXPECT_EQ(s->accepted_tokens, 30);
  EXPECT_DOUBLE_EQ(s->acceptance_rate, 50.0);
  EXPECT_DOUBLE_EQ(s->acceptance_length, 2.5);
  EXPECT_EQ(s->per_position_acceptance_rates, (std::vector<double>{0.8, 0.5, 0.2}));
}

// A fresh llmserve server registers the counters with its first draft: a run
// that starts before it still gets its figures.
TEST(BenchSpecDecode, CountersMissingBeforeTheRunCountFromZero) {
  frontend::metrics::FrontendMetrics server(frontend::metrics::FrontendMetricsConfig{"m", {0}});
  const auto before = ParseSpecDecodeCounters(server.Render());
  ASSERT_FALSE(before.has_value());
  server.RecordSchedulerStats(0, SpecStatsReport(4, 8, 6, {4, 2}));
  const auto s = SummarizeSpecDecode(before, ParseSpecDecodeCounters(server.Render()));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->num_drafts, 4);
  EXPECT_DOUBLE_EQ(s->acceptance_length, 2.5);
  EXPECT_EQ(s->per_position_acceptance_rates, (std::vector<double>{1.0, 0.5}));
}

TEST(BenchSpecDecode, TableAndJsonCarryTheFigures) {
  ServeBenchOptions o;
  RunFacts f;
  BenchmarkMetrics m;
  EXPECT_EQ(ResultTable(o, f, m).find("Speculative Decoding"), std::string::npos);
  EXPECT_FALSE(ResultJson(o, f, m, {}).contains("spec_decode_acceptance_rate"));
  SpecDecodeSummary s;
  s.num_drafts = 20;
  s.draft_tokens = 60;
  s.accepted_tokens = 30;
  s.acceptance_rate = 50.0;
  s.acceptance_length = 2.5;
  s.per_position_acceptance_rates = {0.8, 0.5, 0.2};
  m.spec_decode = s;
  const std::string table = ResultTable(o, f, m);
  const std::string section =
      "---------------Speculative Decoding---------------\n"
      "Acceptance rate (%):                     50.00     \n"
      "Acceptance length:                       2.50      \n"
      "Drafts:                                  20        \n"
      "Draft tokens:                            60        \n"
      "Accepted tokens:                         30        \n"
      "Per-position acceptance (%):\n"
      "  Position 0:                            80.00     \n"
      "  Position 1:                            50.00     \n"
      "  Position 2:                            20.00     \n"
      "==================================================\n";
  ASSERT_GE(table.size(), section.size());
  EXPECT_EQ(table.substr(table.size() - section.size()), section);
  const nlohmann::json j = ResultJson(o, f, m, {});
  EXPECT_EQ(j["spec_decode_acceptance_rate"], 50.0);
  EXPECT_EQ(j["spec_decode_acceptance_length"], 2.5);
  EXPECT_EQ(j["spec_decode_num_drafts"], 20);
  EXPECT_EQ(j["spec_decode_draft_tokens"], 60);
  EXPECT_EQ(j["spec_decode_accepted_tokens"], 30);
  EXPECT_EQ(j["spec_decode_per_position_acceptance_rates"], nlohmann::json::array({0.8, 0.5, 0.2}));
}

}  // namespace
}  // namespace llmserve::deploy::bench
