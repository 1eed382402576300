#pragma once
// FrontendMetrics: the vLLM metric families one frontend exposes on /metrics
// (names, labels and buckets as vLLM's PrometheusStatLogger), fed from two
// sources:
//  - each engine's SchedulerStats as they arrive with its outputs: gauges take
//    the latest value; counters add the deltas the engine reports (queries,
//    hits, preemptions since its last report); every step's scheduled token
//    count goes into iteration_tokens_total;
//  - each request's timing and token counts, measured by a RequestTracker as
//    its outputs reach this frontend;
//  - each engine's ReadyResponse: its cache configuration and KV block count
//    (vllm:cache_config_info, cache_config_info.h);
//  - with LoRA on, the requests' adapters as RequestTrackers follow them
//    (vllm:lora_requests_info, lora_requests_info.h).
// Every series has the labels model_name and engine (the DP rank); series of
// the ranks given at construction exist (at zero) from the start, others
// appear when a rank first reports. All methods are thread-safe; the record
// calls are a map lookup under a short mutex plus atomic adds.
//
// An engine sends each SchedulerStats report to one API server only (the
// first it has outputs for), so with several API servers the counters fed by
// reports add up exactly across them, and the engine gauges are the freshest
// report's: Collect() stamps them with the engine's step counter and the time
// they arrived (ReportStamp) for the merge (snapshot_merge.h).

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "frontend/metrics/cache_config_info.h"
#include "frontend/metrics/lora_requests_info.h"
#include "frontend/metrics/registry.h"
#include "frontend/metrics/spec_decode_metrics.h"
#include "proto/engine_core_output.h"

namespace llmserve::frontend::metrics {

struct FrontendMetricsConfig {
  std::string model_name;              // the served model name (label model_name)
  std::vector<uint32_t> engine_ranks;  // DP ranks whose series exist from the start
  int32_t max_loras = 0;               // >0: LoRA is on (--max-loras): vllm:lora_requests_info exists
};

// What a finished request measured (vLLM's FinishedRequestStats). The engine
// phases are differences of one engine's monotonic timestamps; each is absent
// when the request ended before the events that bound it.
struct FinishedRequest {
  proto::FinishReason reason = proto::FinishReason::kStop;
  double e2e_latency_s = 0.0;              // arrival at the frontend -> finish, frontend clock
  std::optional<double> queue_s;           // QUEUED -> first SCHEDULED
  std::optional<double> prefill_s;         // first SCHEDULED -> first token
  std::optional<double> decode_s;          // first token -> last token
  std::optional<double> inference_s;       // first SCHEDULED -> last token
  std::optional<double> time_per_output_token_s;  // decode / (generated tokens - 1)
  int32_t prompt_tokens = 0;
  int32_t generation_tokens = 0;
  int32_t n = 1;                   // the request's n
  int32_t max_tokens = 0;          // its max_tokens (when unset: what the context leaves)
  int32_t max_model_len = 0;       // sets the buckets of the token-count histograms; 0: unknown
};

// vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to `max_value`.
std::vector<double> Buckets125(int64_t max_value);

// One engine's figures at one moment (counters are totals since start).
struct EngineSnapshot {
  uint32_t engine = 0;
  double running = 0, waiting = 0, kv_usage = 0;  // the engine's last report
  double prompt_tokens = 0, generation_tokens = 0;
  double prefix_queries = 0, prefix_hits = 0;
  std::optional<SpecDecodeTotals> spec;  // set once the engine reported speculative decoding
};

class FrontendMetrics {
 public:
  explicit FrontendMetrics(FrontendMetricsConfig config);
  FrontendMetrics(const FrontendMetrics&) = delete;
  FrontendMetrics& operator=(const FrontendMetrics&) = delete;

  // Engine `engine` announced itself with `cache` and `num_kv_blocks` KV
  // blocks (its ReadyResponse): sets vllm:cache_config_info.
  void RecordEngineReady(uint32_t engine, const proto::CacheConfig& cache, uint64_t num_kv_blocks);
  // vllm:lora_requests_info, or null without LoRA.
  LoraRequestsInfo* lora_requests_info() const { return lora_requests_info_.get(); }
  // One SchedulerStats report from engine `engine` (it also stamps
  // vllm:lora_requests_info's current series, as vLLM does every step).
  void RecordSchedulerStats(uint32_t engine, const proto::SchedulerStats& stats);
  // A request's first token arrived: counts its prompt tokens and observes TTFT.
  void RecordFirstToken(uint32_t engine, int32_t prompt_tokens, double time_to_first_token_s);
  // Tokens a request generated in one output.
  void RecordGenerationTokens(uint32_t engine, int32_t count);
  // The engine-clock gap between two outputs of one request.
  void RecordInterTokenLatency(uint32_t engine, double seconds);
  // A request ended (counted in request_success by reason, latencies, token
  // counts and parameters observed). The token-count families
  // (request_prompt_tokens, request_generation_tokens,
  // request_params_max_tokens) have buckets up to max_model_len, which the
  // frontend learns from the engines: they appear with the first finished
  // request that knows it.
  void RecordFinished(uint32_t engine, const FinishedRequest& request);

  // One HTTP request as prometheus-fastapi-instrumentator counts it for vLLM:
  // http_requests_total{handler, method, status="2xx"...} and the duration
  // histograms; /metrics, /health, /load, /ping, /version and /server_info
  // are not counted (vLLM excludes them).
  void RecordHttpRequest(const std::string& handler, const std::string& method, int status, double seconds);

  // Every engine's figures, by rank.
  std::vector<EngineSnapshot> Snapshot() const;

  // Every family's values as of now; the engine gauges' series carry the
  // stamp of the report that set them.
  std::vector<FamilySnapshot> Collect() const;
  // The whole scrape in Prometheus text format.
  std::string Render() const { return RenderFamilies(Collect()); }
  // Grows with every record call (after its values changed): a publisher of
  // snapshots compares it with the value it last published at.
  uint64_t changes() const { return changes_.load(std::memory_order_acquire); }
  // The exposed names of every family (counters with "_total"), for checks.
  std::vector<std::string> ExposedNames() const;

 private:
  struct EngineSeries;
  EngineSeries& ForEngine(uint32_t engine);
  // The token-count histograms of `s`, registering their families (needs mu_).
  void AddLengthSeries(uint32_t engine, int32_t max_model_len, EngineSeries& s);
  struct EngineSeriesDeleter {
    void operator()(EngineSeries* s) const;
  };
  // Counts one record call, after its values changed.
  void Changed() { changes_.fetch_add(1, std::memory_order_release); }

  FrontendMetricsConfig config_;
  Registry registry_;
  Family<Gauge>* running_;
  Family<Gauge>* waiting_;
  Family<Gauge>* kv_usage_;
  Family<Counter>* prompt_tokens_;
  Family<Counter>* generation_tokens_;
  Family<Counter>* request_success_;
  Family<Counter>* preemptions_;
  Family<Counter>* prefix_queries_;
  Family<Counter>* prefix_hits_;
  Family<Histogram>* ttft_;
  Family<Histogram>* itl_;
  Family<Histogram>* tpot_;
  Family<Histogram>* e2e_;
  Family<Histogram>* queue_;
  Family<Histogram>* inference_;
  Family<Histogram>* prefill_;
  Family<Histogram>* decode_;
  Family<Histogram>* iteration_tokens_;
  Family<Histogram>* params_n_;
  Family<Counter>* http_requests_;
  Family<Histogram>* http_duration_;
  Histogram* http_duration_highr_;
  std::unique_ptr<CacheConfigInfo> cache_config_info_;
  std::unique_ptr<LoraRequestsInfo> lora_requests_info_;
  Family<Histogram>* request_prompt_tokens_ = nullptr;      // registered by AddLengthSeries, guarded by mu_
  Family<Histogram>* request_generation_tokens_ = nullptr;
  Family<Histogram>* params_max_tokens_ = nullptr;
  std::unique_ptr<SpecDecodeMetrics> spec_decode_;  // with the first speculating engine's report, guarded by mu_
  std::vector<std::string> exposed_names_;
  mutable std::mutex mu_;
  std::map<uint32_t, std::unique_ptr<EngineSeries, EngineSeriesDeleter>> engines_;
  std::atomic<uint64_t> changes_{0};
};

}  // namespace llmserve::frontend::metrics
