#include "frontend/metrics/frontend_metrics.h"

#include <chrono>

namespace llmserve::frontend::metrics {

namespace {

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Bucket bounds as vLLM's PrometheusStatLogger sets them (vllm/v1/metrics/loggers.py).
const std::vector<double> kTimeToFirstTokenBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                                      0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0,
                                                      20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kInterTokenBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                                0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kRequestLatencyBuckets = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,  15.0, 20.0,
                                                    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kParamsNBuckets = {1, 2, 5, 10, 20};
// prometheus-fastapi-instrumentator's defaults, which vLLM's /metrics carries.
const std::vector<double> kHttpDurationBuckets = {0.1, 0.5, 1};
const std::vector<double> kHttpHighResolutionBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1,  1.5, 2,
                                                        2.5,  3,     3.5,  4,     4.5, 5,    7.5, 10,   30, 60};
const char* const kUncountedHandlers[] = {"/metrics", "/health", "/load", "/ping", "/version", "/server_info"};
const std::vector<double> kIterationTokenBuckets = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};

constexpr proto::FinishReason kReasons[] = {proto::FinishReason::kStop, proto::FinishReason::kLength,
                                            proto::FinishReason::kAbort, proto::FinishReason::kError};

}  // namespace

std::vector<double> Buckets125(int64_t max_value) {
  std::vector<double> buckets;
  for (int64_t scale = 1;; scale *= 10) {
    for (int64_t mantissa : {1, 2, 5}) {
      if (mantissa * scale > max_value) return buckets;
      buckets.push_back(static_cast<double>(mantissa * scale));
    }
  }
}

struct FrontendMetrics::EngineSeries {
  Gauge* running;
  Gauge* waiting;
  Gauge* kv_usage;
  Counter* prompt_tokens;
  Counter* generation_tokens;
  Counter* success[4];  // by proto::FinishReason value
  Counter* preemptions;
  Counter* prefix_queries;
  Counter* prefix_hits;
  Histogram* ttft;
  Histogram* itl;
  Histogram* tpot;
  Histogram* e2e;
  Histogram* queue;
  Histogram* inference;
  Histogram* prefill;
  Histogram* decode;
  Histogram* iteration_tokens;
  Histogram* params_n;
  Histogram* request_prompt_tokens = nullptr;  // set by AddLengthSeries
  Histogram* request_generation_tokens = nullptr;
  Histogram* params_max_tokens = nullptr;
  ReportStamp gauges_stamp;  // the report that set running, waiting and kv_usage (guarded by mu_)
};

FrontendMetrics::FrontendMetrics(FrontendMetricsConfig config) : config_(std::move(config)) {
  const std::vector<std::string> labels = {"model_name", "engine"};
  running_ = &registry_.AddGauge("vllm:num_requests_running", "Requests in the engine's running batch (scheduled each step).", labels);
  waiting_ = &registry_.AddGauge("vllm:num_requests_waiting", "Requests in the engine's waiting queue.", labels);
  kv_usage_ = &registry_.AddGauge("vllm:kv_cache_usage_perc", "Fraction of the engine's KV-cache blocks in use (1 = all).", labels);
  prefix_queries_ = &registry_.AddCounter("vllm:prefix_cache_queries",
                                          "Tokens looked up in the prefix cache.", labels);
  prefix_hits_ = &registry_.AddCounter("vllm:prefix_cache_hits",
                                       "Tokens found in the prefix cache.", labels);
  preemptions_ = &registry_.AddCounter("vllm:num_preemptions", "Requests the engine preempted (recompute).", labels);
  prompt_tokens_ = &registry_.AddCounter("vllm:prompt_tokens", "Prompt tokens of requests that produced their first token.", labels);
  generation_tokens_ = &registry_.AddCounter("vllm:generation_tokens", "Tokens generated.", labels);
  request_success_ = &registry_.AddCounter("vllm:request_success", "Finished requests, by finish reason.",
                                           {"model_name", "engine", "finished_reason"});
  iteration_tokens_ = &registry_.AddHistogram("vllm:iteration_tokens_total",
                                              "Tokens scheduled per engine step.", labels,
                                              kIterationTokenBuckets);
  ttft_ = &registry_.AddHistogram("vllm:time_to_first_token_seconds", "Seconds from arrival at the frontend to the first token.",
                                  labels, kTimeToFirstTokenBuckets);
  itl_ = &registry_.AddHistogram("vllm:inter_token_latency_seconds", "Seconds between two outputs of one request (engine clock).",
                                 labels, kInterTokenBuckets);
  tpot_ = &registry_.AddHistogram("vllm:request_time_per_output_token_seconds",
                                  "Per request: decode seconds per generated token after the first.", labels, kInterTokenBuckets);
  e2e_ = &registry_.AddHistogram("vllm:e2e_request_latency_seconds", "Seconds from arrival at the frontend to the finish.",
                                 labels, kRequestLatencyBuckets);
  queue_ = &registry_.AddHistogram("vllm:request_queue_time_seconds",
                                   "Seconds a request waited before it was first scheduled.", labels,
                                   kRequestLatencyBuckets);
  inference_ = &registry_.AddHistogram("vllm:request_inference_time_seconds",
                                       "Seconds from first scheduled to last token.", labels,
                                       kRequestLatencyBuckets);
  prefill_ = &registry_.AddHistogram("vllm:request_prefill_time_seconds",
                                     "Seconds from first scheduled to first token.", labels,
                                     kRequestLatencyBuckets);
  decode_ = &registry_.AddHistogram("vllm:request_decode_time_seconds",
                                    "Seconds from first token to last token.", labels,
                                    kRequestLatencyBuckets);
  params_n_ = &registry_.AddHistogram("vllm:request_params_n", "The n request parameter.", labels, kParamsNBuckets);
  http_requests_ = &registry_.AddCounter("http_requests", "Total number of requests by method, status and handler.",
                                         {"handler", "method", "status"});
  http_duration_ = &registry_.AddHistogram("http_request_duration_seconds",
                                           "Latency with only few buckets by handler and method.",
                                           {"handler", "method"}, kHttpDurationBuckets);
  http_duration_highr_ = &registry_.AddHistogram("http_request_duration_highr_seconds",
                                                 "Latency with many buckets but no API specific labels.", {},
                                                 kHttpHighResolutionBuckets).Labels({});
  for (const FamilyBase* f : std::initializer_list<const FamilyBase*>{
           running_, waiting_, kv_usage_, prefix_queries_, prefix_hits_, preemptions_, prompt_tokens_,
           generation_tokens_, request_success_, iteration_tokens_, ttft_, itl_, tpot_, e2e_, queue_, inference_,
           prefill_, decode_, params_n_, http_requests_, http_duration_})
    exposed_names_.push_back(f->exposed_name());
  cache_config_info_ = std::make_unique<CacheConfigInfo>(registry_);
  exposed_names_.push_back("vllm:cache_config_info");
  if (config_.max_loras > 0) {
    lora_requests_info_ = std::make_unique<LoraRequestsInfo>(registry_, config_.max_loras, UnixSeconds);
    exposed_names_.push_back("vllm:lora_requests_info");
  }
  for (uint32_t rank : config_.engine_ranks) ForEngine(rank);
}

FrontendMetrics::EngineSeries& FrontendMetrics::ForEngine(uint32_t engine) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = engines_.find(engine);
  if (it != engines_.end()) return *it->second;
  const std::vector<std::string> v = {config_.model_name, std::to_string(engine)};
  std::unique_ptr<EngineSeries, EngineSeriesDeleter> s(new EngineSeries{});
  s->running = &running_->Labels(v);
  s->waiting = &waiting_->Labels(v);
  s->kv_usage = &kv_usage_->Labels(v);
  s->prompt_tokens = &prompt_tokens_->Labels(v);
  s->generation_tokens = &generation_tokens_->Labels(v);
  for (proto::FinishReason r : kReasons)
    s->success[static_cast<int>(r)] = &request_success_->Labels({v[0], v[1], proto::FinishReasonName(r)});
  s->preemptions = &preemptions_->Labels(v);
  s->prefix_queries = &prefix_queries_->Labels(v);
  s->prefix_hits = &prefix_hits_->Labels(v);
  s->ttft = &ttft_->Labels(v);
  s->itl = &itl_->Labels(v);
  s->tpot = &tpot_->Labels(v);
  s->e2e = &e2e_->Labels(v);
  s->queue = &queue_->Labels(v);
  s->inference = &inference_->Labels(v);
  s->prefill = &prefill_->Labels(v);
  s->decode = &decode_->Labels(v);
  s->iteration_tokens = &iteration_tokens_->Labels(v);
  s->params_n = &params_n_->Labels(v);
  return *engines_.emplace(engine, std::move(s)).first->second;
}

void FrontendMetrics::EngineSeriesDeleter::operator()(EngineSeries* s) const { delete s; }

void FrontendMetrics::RecordSchedulerStats(uint32_t engine, const proto::SchedulerStats& stats) {
  EngineSeries& s = ForEngine(engine);
  {
    std::lock_guard<std::mutex> lock(mu_);  // Collect sees the three gauges and their stamp together
    s.running->Set(stats.num_running_reqs);
    s.waiting->Set(stats.num_waiting_reqs);
    s.kv_usage->Set(stats.kv_cache_usage);
    s.gauges_stamp = ReportStamp{stats.step_counter, UnixSeconds()};
  }
  s.prefix_queries->Inc(static_cast<double>(stats.prefix_cache_queries));
  s.prefix_hits->Inc(static_cast<double>(stats.prefix_cache_hits));
  s.preemptions->Inc(static_cast<double>(stats.num_preemptions));
  for (int32_t tokens : stats.iteration_tokens) s.iteration_tokens->Observe(tokens);
  if (lora_requests_info_ != nullptr) lora_requests_info_->Stamp();
  if (stats.spec_decoding_stats) {
    SpecDecodeMetrics* spec;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (spec_decode_ == nullptr) {
        spec_decode_ = std::make_unique<SpecDecodeMetrics>(registry_, config_.model_name);
        for (std::string& name : spec_decode_->ExposedNames()) exposed_names_.push_back(std::move(name));
      }
      spec = spec_decode_.get();
    }
    spec->Record(engine, *stats.spec_decoding_stats);
  }
  Changed();
}

void FrontendMetrics::RecordFirstToken(uint32_t engine, int32_t prompt_tokens, double time_to_first_token_s) {
  EngineSeries& s = ForEngine(engine);
  s.prompt_tokens->Inc(prompt_tokens);
  s.ttft->Observe(time_to_first_token_s);
  Changed();
}

void FrontendMetrics::RecordGenerationTokens(uint32_t engine, int32_t count) {
  ForEngine(engine).generation_tokens->Inc(count);
  Changed();
}

void FrontendMetrics::RecordInterTokenLatency(uint32_t engine, double seconds) {
  ForEngine(engine).itl->Observe(seconds);
  Changed();
}

void FrontendMetrics::AddLengthSeries(uint32_t engine, int32_t max_model_len, EngineSeries& s) {
  const std::vector<std::string> labels = {"model_name", "engine"};
  if (request_prompt_tokens_ == nullptr) {
    const std::vector<double> buckets = Buckets125(max_model_len);
    request_prompt_tokens_ = &registry_.AddHistogram("vllm:request_prompt_tokens", "Prompt tokens per request.", labels, buckets);
    request_generation_tokens_ = &registry_.AddHistogram("vllm:request_generation_tokens",
                                                         "Generated tokens per request.", labels, buckets);
    params_max_tokens_ = &registry_.AddHistogram("vllm:request_params_max_tokens",
                                                 "The max_tokens request parameter.", labels, buckets);
  }
  const std::vector<std::string> v = {config_.model_name, std::to_string(engine)};
  s.request_prompt_tokens = &request_prompt_tokens_->Labels(v);
  s.request_generation_tokens = &request_generation_tokens_->Labels(v);
  s.params_max_tokens = &params_max_tokens_->Labels(v);
}

void FrontendMetrics::RecordFinished(uint32_t engine, const FinishedRequest& request) {
  EngineSeries& s = ForEngine(engine);
  s.params_n->Observe(request.n);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (s.request_prompt_tokens == nullptr && request.max_model_len > 0) AddLengthSeries(engine, request.max_model_len, s);
  }
  if (s.request_prompt_tokens != nullptr) {
    s.request_prompt_tokens->Observe(request.prompt_tokens);
    s.request_generation_tokens->Observe(request.generation_tokens);
    s.params_max_tokens->Observe(request.max_tokens);
  }
  const int reason = static_cast<int>(request.reason);
  if (reason >= 0 && reason < 4) s.success[reason]->Inc();
  s.e2e->Observe(request.e2e_latency_s);
  if (request.queue_s) s.queue->Observe(*request.queue_s);
  if (request.prefill_s) s.prefill->Observe(*request.prefill_s);
  if (request.decode_s) s.decode->Observe(*request.decode_s);
  if (request.inference_s) s.inference->Observe(*request.inference_s);
  if (request.time_per_output_token_s) s.tpot->Observe(*request.time_per_output_token_s);
  Changed();
}

void FrontendMetrics::RecordHttpRequest(const std::string& handler, const std::string& method, int status,
                                        double seconds) {
  for (const char* skipped : kUncountedHandlers)
    if (handler == skipped) return;
  const std::string group = std::to_string(status / 100) + "xx";
  http_requests_->Labels({handler, method, group}).Inc();
  http_duration_->Labels({handler, method}).Observe(seconds);
  http_duration_highr_->Observe(seconds);
  Changed();
}

void FrontendMetrics::RecordEngineReady(uint32_t engine, const proto::CacheConfig& cache, uint64_t num_kv_blocks) {
  cache_config_info_->EngineReady(engine, cache, num_kv_blocks);
  Changed();
}

std::vector<std::string> FrontendMetrics::ExposedNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exposed_names_;
}

std::vector<FamilySnapshot> FrontendMetrics::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<FamilySnapshot> families = registry_.Collect();
  std::map<std::string, ReportStamp> stamps;  // by the engine label's value
  for (const auto& [engine, s] : engines_) stamps[std::to_string(engine)] = s->gauges_stamp;
  for (FamilySnapshot& f : families) {
    if (f.name != running_->name() && f.name != waiting_->name() && f.name != kv_usage_->name()) continue;
    for (SeriesSnapshot& series : f.series) {
      auto it = stamps.find(series.label_values[1]);  // labels: model_name, engine
      if (it != stamps.end()) series.stamp = it->second;
    }
  }
  return families;
}

std::vector<EngineSnapshot> FrontendMetrics::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EngineSnapshot> out;
  for (const auto& [engine, s] : engines_) {
    out.push_back(EngineSnapshot{engine, s->running->value(), s->waiting->value(), s->kv_usage->value(),
                                 s->prompt_tokens->value(), s->generation_tokens->value(),
                                 s->prefix_queries->value(), s->prefix_hits->value(), std::nullopt});
    if (spec_decode_ != nullptr) out.back().spec = spec_decode_->Totals(engine);
  }
  return out;
}

}  // namespace llmserve::frontend::metrics
