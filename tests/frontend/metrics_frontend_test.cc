// FrontendMetrics and RequestTracker: vLLM's families and labels, engine
// stats deltas accumulated per engine, and a request's outputs turned into
// exactly the counts and latencies they imply (engine-clock phases from
// engine timestamps, TTFT/E2E from the frontend clock).
#include <gtest/gtest.h>

#include "frontend/metrics/frontend_metrics.h"
#include "frontend/metrics/request_tracker.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

using testing::ParsePrometheusText;
using testing::PromScrape;
using std::chrono::milliseconds;

const std::map<std::string, std::string> kEngine0 = {{"model_name", "tiny"}, {"engine", "0"}};
const std::map<std::string, std::string> kEngine1 = {{"model_name", "tiny"}, {"engine", "1"}};

PromScrape Scrape(const FrontendMetrics& m) {
  PromScrape s = ParsePrometheusText(m.Render());
  EXPECT_EQ(s.error, "");
  return s;
}

double V(const PromScrape& s, const std::string& name, std::map<std::string, std::string> labels) {
  auto v = s.Value(name, labels);
  EXPECT_TRUE(v.has_value()) << name;
  return v.value_or(-1);
}

TEST(FrontendMetrics, VllmFamiliesExistAtZeroForEveryEngine) {
  FrontendMetrics m({"tiny", {0, 1}});
  PromScrape s = Scrape(m);
  const std::map<std::string, std::string> types = {
      {"vllm:num_requests_running", "gauge"},
      {"vllm:num_requests_waiting", "gauge"},
      {"vllm:kv_cache_usage_perc", "gauge"},
      {"vllm:prompt_tokens_total", "counter"},
      {"vllm:generation_tokens_total", "counter"},
      {"vllm:request_success_total", "counter"},
      {"vllm:num_preemptions_total", "counter"},
      {"vllm:prefix_cache_queries_total", "counter"},
      {"vllm:prefix_cache_hits_total", "counter"},
      {"vllm:time_to_first_token_seconds", "histogram"},
      {"vllm:inter_token_latency_seconds", "histogram"},
      {"vllm:e2e_request_latency_seconds", "histogram"},
      {"vllm:request_queue_time_seconds", "histogram"},
      {"vllm:request_prefill_time_seconds", "histogram"},
      {"vllm:request_decode_time_seconds", "histogram"},
      {"vllm:iteration_tokens_total", "histogram"},
  };
  for (const auto& [name, type] : types) {
    ASSERT_TRUE(s.families.count(name)) << name;
    EXPECT_EQ(s.families.at(name).type, type) << name;
  }
  for (const char* reason : {"stop", "length", "abort", "error"})
    for (const char* engine : {"0", "1"})
      EXPECT_EQ(V(s, "vllm:request_success_total", {{"engine", engine}, {"finished_reason", reason}}), 0);
  // vLLM's bucket bounds.
  EXPECT_EQ(V(s, "vllm:time_to_first_token_seconds_bucket", {{"engine", "1"}, {"le", "2560.0"}}), 0);
  EXPECT_EQ(V(s, "vllm:e2e_request_latency_seconds_bucket", {{"engine", "0"}, {"le", "7680.0"}}), 0);
  EXPECT_EQ(V(s, "vllm:inter_token_latency_seconds_bucket", {{"engine", "0"}, {"le", "0.075"}}), 0);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_bucket", {{"engine", "0"}, {"le", "16384.0"}}), 0);
  EXPECT_EQ(s.families.at("vllm:time_to_first_token_seconds").samples.size(), 2u * (22 + 1 + 2));
  for (const std::string& name : m.ExposedNames()) EXPECT_TRUE(s.families.count(name)) << name;
}

TEST(FrontendMetrics, SchedulerStatsSetGaugesAndAccumulateDeltasPerEngine) {
  FrontendMetrics m({"tiny", {0}});
  proto::SchedulerStats a;
  a.num_running_reqs = 3;
  a.num_waiting_reqs = 2;
  a.kv_cache_usage = 0.5;
  a.prefix_cache_queries = 64;
  a.prefix_cache_hits = 16;
  a.num_preemptions = 1;
  a.iteration_tokens = {1, 100, 9000};
  m.RecordSchedulerStats(0, a);
  proto::SchedulerStats b;
  b.num_running_reqs = 1;
  b.kv_cache_usage = 0.25;
  b.prefix_cache_queries = 10;
  b.prefix_cache_hits = 10;
  b.iteration_tokens = {8};
  m.RecordSchedulerStats(0, b);
  m.RecordSchedulerStats(1, a);  // a rank not known at start appears
  PromScrape s = Scrape(m);
  EXPECT_EQ(V(s, "vllm:num_requests_running", kEngine0), 1);
  EXPECT_EQ(V(s, "vllm:num_requests_waiting", kEngine0), 0);
  EXPECT_EQ(V(s, "vllm:kv_cache_usage_perc", kEngine0), 0.25);
  EXPECT_EQ(V(s, "vllm:prefix_cache_queries_total", kEngine0), 74);
  EXPECT_EQ(V(s, "vllm:prefix_cache_hits_total", kEngine0), 26);
  EXPECT_EQ(V(s, "vllm:num_preemptions_total", kEngine0), 1);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_count", kEngine0), 4);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_sum", kEngine0), 9109);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_bucket", {{"engine", "0"}, {"le", "1.0"}}), 1);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_bucket", {{"engine", "0"}, {"le", "8.0"}}), 2);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_bucket", {{"engine", "0"}, {"le", "8192.0"}}), 3);
  EXPECT_EQ(V(s, "vllm:iteration_tokens_total_bucket", {{"engine", "0"}, {"le", "16384.0"}}), 4);
  EXPECT_EQ(V(s, "vllm:num_requests_running", kEngine1), 3);
  EXPECT_EQ(V(s, "vllm:prefix_cache_queries_total", kEngine1), 64);
}

TEST(FrontendMetrics, SpecDecodingCountersAppearWithTheFirstReportAndAccumulate) {
  FrontendMetrics m({"tiny", {0}});
  EXPECT_EQ(Scrape(m).families.count("vllm:spec_decode_num_drafts_total"), 0u);
  m.RecordSchedulerStats(0, proto::SchedulerStats{});  // an engine that does not speculate
  EXPECT_EQ(Scrape(m).families.count("vllm:spec_decode_num_drafts_total"), 0u);
  proto::SchedulerStats a;
  a.spec_decoding_stats = proto::SpecDecodingStats{3, 2, 5, 3, {2, 1, 0}};
  m.RecordSchedulerStats(0, a);
  a.spec_decoding_stats = proto::SpecDecodingStats{3, 1, 3, 3, {1, 1, 1}};
  m.RecordSchedulerStats(0, a);
  PromScrape s = Scrape(m);
  EXPECT_EQ(s.families.at("vllm:spec_decode_num_drafts_total").type, "counter");
  EXPECT_EQ(V(s, "vllm:spec_decode_num_drafts_total", kEngine0), 3);
  EXPECT_EQ(V(s, "vllm:spec_decode_num_draft_tokens_total", kEngine0), 8);
  EXPECT_EQ(V(s, "vllm:spec_decode_num_accepted_tokens_total", kEngine0), 6);
  for (auto [pos, want] : std::vector<std::pair<const char*, double>>{{"0", 3}, {"1", 2}, {"2", 1}}) {
    EXPECT_EQ(V(s, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                {{"model_name", "tiny"}, {"engine", "0"}, {"position", pos}}),
              want);
  }
  for (const std::string& name : m.ExposedNames()) EXPECT_TRUE(s.families.count(name)) << name;
}

proto::EngineCoreOutput Output(int tokens, std::vector<proto::EngineCoreEvent> events = {}) {
  proto::EngineCoreOutput o;
  o.request_id = "r";
  for (int i = 0; i < tokens; ++i) o.new_token_ids.push_back(10 + i);
  o.events = std::move(events);
  return o;
}

TEST(RequestTracker, OneRequestMovesEveryFamilyByTheExpectedAmount) {
  FrontendMetrics m({"tiny", {0, 1}});
  const auto t0 = RequestTracker::Clock::now();
  RequestTracker r(&m, /*prompt_tokens=*/7, t0, {.n = 2, .max_tokens = 30, .max_model_len = 100, .lora_name = ""});
  r.OnRouted(1);
  // Engine clock: queued 100.0, scheduled 100.5, first token 101.0, then 101.25, 101.75.
  r.OnOutput(Output(1, {{1, 100.0}, {2, 100.5}}), 1, 101.0, t0 + milliseconds(30));
  r.OnOutput(Output(2), 1, 101.25, t0 + milliseconds(40));
  r.OnOutput(Output(2), 1, 101.75, t0 + milliseconds(50));
  r.OnFinished(proto::FinishReason::kLength, t0 + milliseconds(1200));
  r.OnFinished(proto::FinishReason::kAbort, t0 + milliseconds(1300));  // ignored: already finished
  EXPECT_TRUE(r.finished());
  PromScrape s = Scrape(m);
  EXPECT_EQ(V(s, "vllm:prompt_tokens_total", kEngine1), 7);
  EXPECT_EQ(V(s, "vllm:generation_tokens_total", kEngine1), 5);
  EXPECT_EQ(V(s, "vllm:generation_tokens_total", kEngine0), 0);
  EXPECT_EQ(V(s, "vllm:request_success_total", {{"engine", "1"}, {"finished_reason", "length"}}), 1);
  EXPECT_EQ(V(s, "vllm:request_success_total", {{"engine", "1"}, {"finished_reason", "abort"}}), 0);
  // TTFT 30 ms (frontend clock): in the 0.04 bucket, not in 0.02.
  EXPECT_EQ(V(s, "vllm:time_to_first_token_seconds_count", kEngine1), 1);
  EXPECT_EQ(V(s, "vllm:time_to_first_token_seconds_bucket", {{"engine", "1"}, {"le", "0.02"}}), 0);
  EXPECT_EQ(V(s, "vllm:time_to_first_token_seconds_bucket", {{"engine", "1"}, {"le", "0.04"}}), 1);
  EXPECT_NEAR(V(s, "vllm:time_to_first_token_seconds_sum", kEngine1), 0.03, 1e-9);
  // ITL from engine stamps: 0.25 and 0.5.
  EXPECT_EQ(V(s, "vllm:inter_token_latency_seconds_count", kEngine1), 2);
  EXPECT_EQ(V(s, "vllm:inter_token_latency_seconds_sum", kEngine1), 0.75);
  EXPECT_EQ(V(s, "vllm:inter_token_latency_seconds_bucket", {{"engine", "1"}, {"le", "0.3"}}), 1);
  // Phases: queue 0.5, prefill 0.5, decode 0.75, inference 1.25; E2E 1.2 s.
  EXPECT_EQ(V(s, "vllm:request_queue_time_seconds_sum", kEngine1), 0.5);
  EXPECT_EQ(V(s, "vllm:request_prefill_time_seconds_sum", kEngine1), 0.5);
  EXPECT_EQ(V(s, "vllm:request_decode_time_seconds_sum", kEngine1), 0.75);
  EXPECT_EQ(V(s, "vllm:request_inference_time_seconds_sum", kEngine1), 1.25);
  EXPECT_EQ(V(s, "vllm:request_time_per_output_token_seconds_sum", kEngine1), 0.75 / 4);
  EXPECT_NEAR(V(s, "vllm:e2e_request_latency_seconds_sum", kEngine1), 1.2, 1e-9);
  EXPECT_EQ(V(s, "vllm:e2e_request_latency_seconds_bucket", {{"engine", "1"}, {"le", "1.0"}}), 0);
  EXPECT_EQ(V(s, "vllm:e2e_request_latency_seconds_bucket", {{"engine", "1"}, {"le", "1.5"}}), 1);
  EXPECT_EQ(V(s, "vllm:e2e_request_latency_seconds_count", kEngine0), 0);
  // Token counts and parameters; length buckets 1-2-5 up to max_model_len 100.
  EXPECT_EQ(V(s, "vllm:request_prompt_tokens_sum", kEngine1), 7);
  EXPECT_EQ(V(s, "vllm:request_prompt_tokens_bucket", {{"engine", "1"}, {"le", "5.0"}}), 0);
  EXPECT_EQ(V(s, "vllm:request_prompt_tokens_bucket", {{"engine", "1"}, {"le", "10.0"}}), 1);
  EXPECT_EQ(V(s, "vllm:request_prompt_tokens_bucket", {{"engine", "1"}, {"le", "100.0"}}), 1);
  EXPECT_FALSE(s.Value("vllm:request_prompt_tokens_bucket", {{"engine", "1"}, {"le", "200.0"}}).has_value());
  EXPECT_EQ(V(s, "vllm:request_generation_tokens_sum", kEngine1), 5);
  EXPECT_EQ(V(s, "vllm:request_params_max_tokens_sum", kEngine1), 30);
  EXPECT_EQ(V(s, "vllm:request_params_n_sum", kEngine1), 2);
  EXPECT_EQ(V(s, "vllm:request_params_n_bucket", {{"engine", "1"}, {"le", "2.0"}}), 1);
  EXPECT_EQ(V(s, "vllm:request_params_n_count", kEngine0), 0);
}

TEST(FrontendMetrics, HttpRequestsAreCountedByHandlerMethodAndStatusClass) {
  FrontendMetrics m({"tiny", {0}});
  m.RecordHttpRequest("/v1/completions", "POST", 200, 0.3);
  m.RecordHttpRequest("/v1/completions", "POST", 201, 2.0);
  m.RecordHttpRequest("/v1/completions", "POST", 400, 0.01);
  m.RecordHttpRequest("none", "GET", 404, 0.001);
  m.RecordHttpRequest("/metrics", "GET", 200, 0.001);  // not counted, as in vLLM
  m.RecordHttpRequest("/health", "GET", 200, 0.001);
  PromScrape s = Scrape(m);
  EXPECT_EQ(V(s, "http_requests_total", {{"handler", "/v1/completions"}, {"method", "POST"}, {"status", "2xx"}}), 2);
  EXPECT_EQ(V(s, "http_requests_total", {{"handler", "/v1/completions"}, {"method", "POST"}, {"status", "4xx"}}), 1);
  EXPECT_EQ(V(s, "http_requests_total", {{"handler", "none"}, {"method", "GET"}, {"status", "4xx"}}), 1);
  EXPECT_FALSE(s.Value("http_requests_total", {{"handler", "/metrics"}}).has_value());
  EXPECT_EQ(V(s, "http_request_duration_seconds_bucket",
              {{"handler", "/v1/completions"}, {"method", "POST"}, {"le", "0.5"}}), 2);
  EXPECT_EQ(V(s, "http_request_duration_seconds_count", {{"handler", "/v1/completions"}, {"method", "POST"}}), 3);
  EXPECT_EQ(V(s, "http_request_duration_highr_seconds_count", {}), 4);
  EXPECT_EQ(V(s, "http_request_duration_highr_seconds_bucket", {{"le", "0.25"}}), 2);
}

TEST(FrontendMetrics, Buckets125AreVllms) {
  EXPECT_EQ(Buckets125(100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_EQ(Buckets125(4096), (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}));
  EXPECT_EQ(Buckets125(0), std::vector<double>{});
}

TEST(RequestTracker, AbortedBeforeAnyTokenCountsOnlyTheAbort) {
  FrontendMetrics m({"tiny", {0}});
  const auto t0 = RequestTracker::Clock::now();
  RequestTracker r(&m, 7, t0);
  r.OnRouted(0);
  r.OnFinished(proto::FinishReason::kAbort, t0 + milliseconds(100));
  RequestTracker never_routed(&m, 7, t0);  // never reached an engine: nothing to record
  never_routed.OnFinished(proto::FinishReason::kAbort, t0);
  PromScrape s = Scrape(m);
  EXPECT_EQ(V(s, "vllm:request_success_total", {{"engine", "0"}, {"finished_reason", "abort"}}), 1);
  EXPECT_EQ(V(s, "vllm:prompt_tokens_total", kEngine0), 0);
  EXPECT_EQ(V(s, "vllm:time_to_first_token_seconds_count", kEngine0), 0);
  EXPECT_EQ(V(s, "vllm:e2e_request_latency_seconds_count", kEngine0), 1);
  EXPECT_EQ(V(s, "vllm:request_queue_time_seconds_count", kEngine0), 0);
  EXPECT_EQ(V(s, "vllm:request_decode_time_seconds_count", kEngine0), 0);
}

TEST(RequestTracker, PreemptionKeepsTheFirstScheduledStamp) {
  FrontendMetrics m({"tiny", {0}});
  const auto t0 = RequestTracker::Clock::now();
  RequestTracker r(&m, 3, t0);
  // Scheduled at 10, preempted (3) and rescheduled at 12 before the first token at 13.
  r.OnOutput(Output(1, {{1, 9.0}, {2, 10.0}, {3, 11.0}, {2, 12.0}}), 0, 13.0, t0);
  r.OnFinished(proto::FinishReason::kStop, t0);
  PromScrape s = Scrape(m);
  EXPECT_EQ(V(s, "vllm:request_queue_time_seconds_sum", kEngine0), 1.0);
  EXPECT_EQ(V(s, "vllm:request_prefill_time_seconds_sum", kEngine0), 3.0);
  EXPECT_EQ(V(s, "vllm:request_decode_time_seconds_sum", kEngine0), 0.0);
  EXPECT_EQ(V(s, "vllm:request_time_per_output_token_seconds_count", kEngine0), 0);  // one token: none
  EXPECT_EQ(V(s, "vllm:request_success_total", {{"engine", "0"}, {"finished_reason", "stop"}}), 1);
}

TEST(RequestTracker, WithoutMetricsDoesNothing) {
  RequestTracker r;
  r.OnRouted(0);
  r.OnOutput(Output(1), 0, 1.0, RequestTracker::Clock::now());
  r.OnFinished(proto::FinishReason::kStop, RequestTracker::Clock::now());
  EXPECT_FALSE(r.finished());
}

}  // namespace
}  // namespace llmserve::frontend::metrics
