// The Prometheus text exposition: number formatting and escaping as
// prometheus_client writes them, the exact text of each metric type, and a
// strict parse of what the registry renders (cumulative buckets, +Inf equal to
// _count, counters that never go down).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "frontend/metrics/registry.h"
#include "frontend/metrics/text_format.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

using testing::ParsePrometheusText;

TEST(MetricsTextFormat, ValuesAsPythonWritesThem) {
  EXPECT_EQ(FormatValue(0), "0.0");
  EXPECT_EQ(FormatValue(5), "5.0");
  EXPECT_EQ(FormatValue(-3), "-3.0");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(0.001), "0.001");
  EXPECT_EQ(FormatValue(2560), "2560.0");
  EXPECT_EQ(FormatValue(0.1 + 0.2), "0.30000000000000004");  // shortest round trip, as repr()
  EXPECT_EQ(FormatValue(1e22), "1e+22");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
}

TEST(MetricsTextFormat, Escaping) {
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("say \"hi\"\\now\n"), "say \"hi\"\\\\now\\n");
}

TEST(MetricsTextFormat, Names) {
  EXPECT_TRUE(IsValidMetricName("vllm:prompt_tokens"));
  EXPECT_TRUE(IsValidMetricName("_x1"));
  EXPECT_FALSE(IsValidMetricName("1x"));
  EXPECT_FALSE(IsValidMetricName("a-b"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("model_name"));
  EXPECT_FALSE(IsValidLabelName("__name__"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("9a"));
}

TEST(MetricsTextFormat, ExactTextOfEachType) {
  Registry r;
  auto& c = r.AddCounter("demo:requests", "Requests \"served\".", {"model_name", "engine"});
  auto& g = r.AddGauge("demo:load", "Load.", {"engine"});
  auto& h = r.AddHistogram("demo:latency_seconds", "Latency.", {"engine"}, {0.5, 1, 2.5});
  c.Labels({"m\"1", "0"}).Inc(2);
  g.Labels({"1"}).Set(0.75);
  auto& s = h.Labels({"0"});
  s.Observe(0.5);  // on a bound: counts in that bucket (le)
  s.Observe(0.7);
  s.Observe(9);
  EXPECT_EQ(r.Render(),
            "# HELP demo:requests_total Requests \"served\".\n"
            "# TYPE demo:requests_total counter\n"
            "demo:requests_total{model_name=\"m\\\"1\",engine=\"0\"} 2.0\n"
            "# HELP demo:load Load.\n"
            "# TYPE demo:load gauge\n"
            "demo:load{engine=\"1\"} 0.75\n"
            "# HELP demo:latency_seconds Latency.\n"
            "# TYPE demo:latency_seconds histogram\n"
            "demo:latency_seconds_bucket{engine=\"0\",le=\"0.5\"} 1.0\n"
            "demo:latency_seconds_bucket{engine=\"0\",le=\"1.0\"} 2.0\n"
            "demo:latency_seconds_bucket{engine=\"0\",le=\"2.5\"} 2.0\n"
            "demo:latency_seconds_bucket{engine=\"0\",le=\"+Inf\"} 3.0\n"
            "demo:latency_seconds_count{engine=\"0\"} 3.0\n"
            "demo:latency_seconds_sum{engine=\"0\"} 10.2\n");
}

TEST(MetricsTextFormat, CountersOnlyGrow) {
  Registry r;
  Counter& c = r.AddCounter("x", "x", {}).Labels({});
  c.Inc(3);
  c.Inc(-1);
  c.Inc(NAN);
  c.Inc(INFINITY);
  c.Inc();
  EXPECT_EQ(c.value(), 4.0);
}

TEST(MetricsTextFormat, HistogramIgnoresNanAndCountsEdges) {
  Registry r;
  Histogram& h = r.AddHistogram("h", "h", {}, {1, 2}).Labels({});
  h.Observe(NAN);
  h.Observe(-5);  // below every bound: first bucket
  h.Observe(2);
  h.Observe(INFINITY);
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(s.count, 3u);
}

TEST(MetricsTextFormat, ParsesStrictlyAndStaysConsistentUnderConcurrentUpdates) {
  Registry r;
  auto& hist = r.AddHistogram("t:lat", "Latency with \\ and\nnewline.", {"engine"}, {0.1, 0.2, 0.4, 0.8});
  auto& count = r.AddCounter("t:n", "n", {"engine"});
  Histogram& h0 = hist.Labels({"0"});
  Counter& c0 = count.Labels({"0"});
  constexpr int kThreads = 4, kPerThread = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        h0.Observe(((i + t) % 10) * 0.1);
        c0.Inc();
      }
    });
  double last_count = -1;
  for (int scrape = 0; scrape < 20; ++scrape) {  // scrapes race with the writers
    auto parsed = ParsePrometheusText(r.Render());
    EXPECT_EQ(parsed.error, "");
    const double n = parsed.Value("t:n_total", {{"engine", "0"}}).value_or(-1);
    EXPECT_GE(n, last_count);
    last_count = n;
  }
  for (auto& t : threads) t.join();
  auto parsed = ParsePrometheusText(r.Render());
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(*parsed.Value("t:n_total", {{"engine", "0"}}), kThreads * kPerThread);
  EXPECT_EQ(*parsed.Value("t:lat_count", {{"engine", "0"}}), kThreads * kPerThread);
  // Values 0.0..0.9 in steps of 0.1, equally often: 0.0 and 0.1 (2/10) are <= 0.1 ...
  EXPECT_EQ(*parsed.Value("t:lat_bucket", {{"le", "0.1"}}), kThreads * kPerThread * 2 / 10);
  EXPECT_EQ(*parsed.Value("t:lat_bucket", {{"le", "+Inf"}}), kThreads * kPerThread);
  EXPECT_EQ(parsed.families.at("t:lat").help, "Latency with \\\\ and\\nnewline.");
}

TEST(MetricsTextFormat, ParserRejectsBrokenText) {
  EXPECT_NE(ParsePrometheusText("x 1\n").error, "");  // no TYPE
  EXPECT_NE(ParsePrometheusText("# TYPE x counter\nx{a=\"1} 1\n").error, "");
  EXPECT_NE(ParsePrometheusText("# TYPE x counter\nx one\n").error, "");
  EXPECT_NE(ParsePrometheusText("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n").error,
            "");
  EXPECT_NE(ParsePrometheusText("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 1\n").error, "");
  EXPECT_EQ(ParsePrometheusText("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n"
                                "h_sum 3.5\n")
                .error,
            "");
}

}  // namespace
}  // namespace llmserve::frontend::metrics
