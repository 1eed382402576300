// MergeSnapshots: several API servers' snapshots as one scrape. Counters and
// histograms add up (also those of servers that exited), engine gauges come
// from the freshest report, info gauges appear once; and API servers that
// split one deployment's events between them merge into exactly the scrape of
// one server that saw them all.
#include <gtest/gtest.h>

#include "frontend/metrics/frontend_metrics.h"
#include "frontend/metrics/snapshot_codec.h"
#include "frontend/metrics/snapshot_merge.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

using testing::ParsePrometheusText;
using testing::PromScrape;

FamilySnapshot Counter1(const std::string& name, std::vector<std::pair<std::string, double>> series) {
  FamilySnapshot f{name, "help", MetricType::kCounter, {"engine"}, {}, GaugeMerge::kFreshest, {}};
  for (auto& [engine, value] : series) f.series.push_back(SeriesSnapshot{{engine}, value, {}, 0.0, {}});
  return f;
}

FamilySnapshot Gauge1(const std::string& name, GaugeMerge merge, double value, ReportStamp stamp = {}) {
  FamilySnapshot f{name, "help", MetricType::kGauge, {"engine"}, {}, merge, {}};
  f.series.push_back(SeriesSnapshot{{"0"}, value, {}, 0.0, stamp});
  return f;
}

FamilySnapshot Histogram1(std::vector<uint64_t> cumulative, double sum, std::vector<double> bounds = {1.0, 2.0}) {
  FamilySnapshot f{"latency", "help", MetricType::kHistogram, {"engine"}, std::move(bounds), GaugeMerge::kFreshest, {}};
  f.series.push_back(SeriesSnapshot{{"0"}, 0.0, std::move(cumulative), sum, {}});
  return f;
}

const FamilySnapshot* Find(const std::vector<FamilySnapshot>& families, const std::string& name) {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

ServerSnapshot Other(std::vector<FamilySnapshot> families, bool running = true) {
  return ServerSnapshot{42, running, std::move(families)};
}

TEST(SnapshotMerge, SumsCountersAndHistogramsPerLabelSet) {
  const std::vector<FamilySnapshot> local = {Counter1("requests", {{"0", 3}}), Histogram1({1, 2, 2}, 2.5)};
  const auto merged = MergeSnapshots(local, {Other({Counter1("requests", {{"0", 4}, {"1", 1}}),
                                                    Histogram1({0, 1, 3}, 7.0)})});
  const FamilySnapshot* requests = Find(merged, "requests");
  ASSERT_NE(requests, nullptr);
  ASSERT_EQ(requests->series.size(), 2u);
  EXPECT_EQ(requests->series[0].label_values, std::vector<std::string>{"0"});
  EXPECT_EQ(requests->series[0].value, 7);
  EXPECT_EQ(requests->series[1].value, 1) << "a series only another server has";
  const FamilySnapshot* latency = Find(merged, "latency");
  ASSERT_NE(latency, nullptr);
  EXPECT_EQ(latency->series[0].cumulative, (std::vector<uint64_t>{1, 3, 5}));
  EXPECT_EQ(latency->series[0].sum, 9.5);
  PromScrape s = ParsePrometheusText(RenderFamilies(merged));
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.Value("latency_count", {{"engine", "0"}}), 5.0);
  EXPECT_EQ(s.Value("requests_total", {{"engine", "0"}}), 7.0);
}

TEST(SnapshotMerge, FamiliesInTheScrapingServersOrderThenNewOnes) {
  const auto merged =
      MergeSnapshots({Counter1("b", {}), Counter1("a", {})},
                     {Other({Counter1("c", {{"0", 1}}), Counter1("a", {})}), Other({Counter1("d", {})})});
  std::vector<std::string> names;
  for (const auto& f : merged) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"b", "a", "c", "d"}));
}

TEST(SnapshotMerge, ExitedServersKeepTheirCountsButNotTheirGauges) {
  const auto merged =
      MergeSnapshots({Counter1("requests", {{"0", 2}}), Gauge1("running", GaugeMerge::kFreshest, 0, {5, 100.0})},
                     {Other({Counter1("requests", {{"0", 5}}), Gauge1("running", GaugeMerge::kFreshest, 3, {9, 101.0}),
                             Gauge1("only_there", GaugeMerge::kFreshest, 1, {1, 1.0})},
                            /*running=*/false)});
  EXPECT_EQ(Find(merged, "requests")->series[0].value, 7) << "totals never go down when a server exits";
  EXPECT_EQ(Find(merged, "running")->series[0].value, 0) << "an exited server reports nothing current";
  EXPECT_EQ(Find(merged, "only_there"), nullptr);
}

TEST(SnapshotMerge, FreshestGaugeByStepCounterWhenReceivedCloseTogether) {
  // Step 11 reached server B a little before step 10 reached this one: the step counter orders them.
  auto merged = MergeSnapshots({Gauge1("running", GaugeMerge::kFreshest, 1, {10, 1000.20})},
                               {Other({Gauge1("running", GaugeMerge::kFreshest, 0, {11, 1000.19})})});
  EXPECT_EQ(Find(merged, "running")->series[0].value, 0);
  // An engine restarted at the same rank counts from step 1 again: seconds later, the later report wins.
  merged = MergeSnapshots({Gauge1("running", GaugeMerge::kFreshest, 4, {9000, 1000.0})},
                          {Other({Gauge1("running", GaugeMerge::kFreshest, 2, {3, 1000.0 + 2 * kReorderWindowS})})});
  EXPECT_EQ(Find(merged, "running")->series[0].value, 2);
  // Equal steps (an engine's idle report after an abort repeats its step): the later one.
  merged = MergeSnapshots({Gauge1("running", GaugeMerge::kFreshest, 1, {7, 1000.0})},
                          {Other({Gauge1("running", GaugeMerge::kFreshest, 0, {7, 1000.001})})});
  EXPECT_EQ(Find(merged, "running")->series[0].value, 0);
  // Never stamped (no report yet) loses to any report; between equals the scraping server's stays.
  merged = MergeSnapshots({Gauge1("running", GaugeMerge::kFreshest, 0)},
                          {Other({Gauge1("running", GaugeMerge::kFreshest, 5, {1, 1000.0})})});
  EXPECT_EQ(Find(merged, "running")->series[0].value, 5);
  merged = MergeSnapshots({Gauge1("running", GaugeMerge::kFreshest, 1, {3, 5.0})},
                          {Other({Gauge1("running", GaugeMerge::kFreshest, 2, {3, 5.0})})});
  EXPECT_EQ(Find(merged, "running")->series[0].value, 1);
}

TEST(SnapshotMerge, InfoGaugesOnceAndLatestTimes) {
  auto merged = MergeSnapshots({Gauge1("cache_config_info", GaugeMerge::kLocal, 1)},
                               {Other({Gauge1("cache_config_info", GaugeMerge::kLocal, 1)})});
  EXPECT_EQ(Find(merged, "cache_config_info")->series.size(), 1u);
  FamilySnapshot other_series = Gauge1("cache_config_info", GaugeMerge::kLocal, 1);
  other_series.series[0].label_values = {"1"};
  merged = MergeSnapshots({Gauge1("cache_config_info", GaugeMerge::kLocal, 1)}, {Other({other_series})});
  EXPECT_EQ(Find(merged, "cache_config_info")->series.size(), 1u) << "only the scraping server's series";
  merged = MergeSnapshots({Gauge1("lora_requests_info", GaugeMerge::kMax, 1700000000.5)},
                          {Other({Gauge1("lora_requests_info", GaugeMerge::kMax, 1700000003.0)})});
  EXPECT_EQ(Find(merged, "lora_requests_info")->series[0].value, 1700000003.0);
}

TEST(SnapshotMerge, LeavesOutAFamilyThatCannotCombine) {
  const auto merged = MergeSnapshots({Histogram1({1, 1, 1}, 0.5)}, {Other({Histogram1({0, 0, 0, 4}, 9, {1, 2, 3})})});
  EXPECT_EQ(Find(merged, "latency")->series[0].cumulative, (std::vector<uint64_t>{1, 1, 1}));
}

TEST(SnapshotMerge, AloneItIsTheServersOwnScrape) {
  FrontendMetrics m({"tiny", {0, 1}});
  proto::SchedulerStats stats;
  stats.num_running_reqs = 2;
  stats.step_counter = 4;
  m.RecordSchedulerStats(1, stats);
  m.RecordHttpRequest("/v1/completions", "POST", 200, 0.2);
  EXPECT_EQ(RenderFamilies(MergeSnapshots(m.Collect(), {})), m.Render());
}

// Feeds one deployment's events to `all` and to one of `servers` each (as the
// engines and the kernel's SO_REUSEPORT spread them).
class SplitDeployment {
 public:
  SplitDeployment() : all_({"tiny", {0, 1}}), a_({"tiny", {0, 1}}), b_({"tiny", {0, 1}}) {}

  FrontendMetrics& To(int server) { return server == 0 ? a_ : b_; }

  void Stats(int server, uint32_t engine, int64_t step, int32_t running, int32_t waiting, int64_t queries) {
    proto::SchedulerStats s;
    s.step_counter = step;
    s.num_running_reqs = running;
    s.num_waiting_reqs = waiting;
    s.kv_cache_usage = 0.01 * running;
    s.prefix_cache_queries = queries;
    s.prefix_cache_hits = queries / 2;
    s.iteration_tokens = {static_cast<int32_t>(queries), 1};
    all_.RecordSchedulerStats(engine, s);
    To(server).RecordSchedulerStats(engine, s);
  }

  void Request(int server, uint32_t engine, int32_t prompt, int32_t generated, double seconds) {
    FinishedRequest r;
    r.e2e_latency_s = seconds;
    r.queue_s = seconds / 8;  // dyadic fractions throughout: sums are exact in any order
    r.prefill_s = seconds / 4;
    r.prompt_tokens = prompt;
    r.generation_tokens = generated;
    r.max_tokens = generated;
    r.max_model_len = 512;
    for (FrontendMetrics* m : {&all_, &To(server)}) {
      m->RecordFirstToken(engine, prompt, seconds / 2);
      m->RecordGenerationTokens(engine, generated);
      m->RecordInterTokenLatency(engine, seconds / 16);
      m->RecordFinished(engine, r);
      m->RecordHttpRequest("/v1/completions", "POST", 200, seconds);
    }
  }

  // What server `scraped` shows, merged with the other's snapshot (through the file format).
  std::string Merged(int scraped) {
    const FrontendMetrics& other = To(1 - scraped);
    auto decoded = DecodeSnapshot(EncodeSnapshot({1, 0}, other.Collect()));
    EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
    return RenderFamilies(MergeSnapshots(To(scraped).Collect(), {ServerSnapshot{1, true, decoded->families}}));
  }

  FrontendMetrics all_, a_, b_;
};

TEST(SnapshotMerge, TwoServersMergeIntoTheScrapeOfOne) {
  SplitDeployment d;
  d.Request(0, 0, 12, 5, 0.25);
  d.Request(1, 0, 7, 3, 1.5);
  d.Request(1, 1, 100, 20, 12.5);
  d.Stats(0, 0, 1, 2, 1, 16);
  d.Stats(1, 0, 2, 1, 0, 8);  // engine 0's last report went to server B
  d.Stats(1, 1, 1, 3, 2, 32);
  d.Stats(0, 1, 2, 0, 0, 0);  // engine 1's to server A
  d.Request(0, 1, 3, 1, 0.0625);
  const std::string one = d.all_.Render();
  ASSERT_EQ(ParsePrometheusText(one).error, "");
  EXPECT_EQ(d.Merged(0), one);
  EXPECT_EQ(d.Merged(1), one);
  EXPECT_NE(d.a_.Render(), one) << "each server alone shows part";
}

TEST(SnapshotCodec, RoundTripsEveryValue) {
  FrontendMetrics m({"tiny", {0}});
  proto::SchedulerStats stats;
  stats.step_counter = 17;
  stats.kv_cache_usage = 0.1 + 0.2;  // not exact in decimal: must survive as the same double
  m.RecordSchedulerStats(0, stats);
  m.RecordInterTokenLatency(0, 1.0 / 3);
  const std::vector<FamilySnapshot> families = m.Collect();
  auto decoded = DecodeSnapshot(EncodeSnapshot({1234, 99}, families));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->owner.pid, 1234);
  EXPECT_EQ(decoded->owner.start_ticks, 99u);
  EXPECT_EQ(decoded->families, families);
  const FamilySnapshot* running = Find(families, "vllm:num_requests_running");
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(running->series[0].stamp.sequence, 17);
  EXPECT_GT(running->series[0].stamp.wall_s, 1.6e9) << "Unix seconds when it arrived";

  FamilySnapshot odd = Gauge1("odd", GaugeMerge::kMax, std::numeric_limits<double>::infinity());
  odd.series.push_back(SeriesSnapshot{{"1"}, std::nan(""), {}, 0.0, {}});
  decoded = DecodeSnapshot(EncodeSnapshot({1, 0}, {odd}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(std::isinf(decoded->families[0].series[0].value));
  EXPECT_TRUE(std::isnan(decoded->families[0].series[1].value));
}

TEST(SnapshotCodec, RejectsWhatIsNotASnapshot) {
  EXPECT_FALSE(DecodeSnapshot("").ok());
  EXPECT_FALSE(DecodeSnapshot("{\"format\": 1}").ok());
  EXPECT_FALSE(DecodeSnapshot("[1, 2]").ok());
  std::string text = EncodeSnapshot({1, 0}, {Histogram1({1, 2, 3}, 1)});
  text.replace(text.find("[1,2,3]"), 7, "[1,2]");  // one bucket short
  EXPECT_FALSE(DecodeSnapshot(text).ok());
}

}  // namespace
}  // namespace llmserve::frontend::metrics
