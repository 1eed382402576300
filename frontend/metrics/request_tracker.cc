#include "frontend/metrics/request_tracker.h"

#include <utility>

namespace llmserve::frontend::metrics {

namespace {
constexpr int32_t kEventQueued = 1;
constexpr int32_t kEventScheduled = 2;
constexpr int32_t kEventPreempted = 3;

double Seconds(RequestTracker::Clock::duration d) { return std::chrono::duration<double>(d).count(); }
}  // namespace

RequestTracker::RequestTracker(FrontendMetrics* metrics, int32_t prompt_tokens, Clock::time_point arrival,
                               TrackedParams params)
    : metrics_(metrics), prompt_tokens_(prompt_tokens), arrival_(arrival), params_(std::move(params)) {
  if (metrics_ != nullptr && !params_.lora_name.empty()) lora_ = metrics_->lora_requests_info();
  if (lora_ != nullptr) lora_->Arrived(params_.lora_name);
}

RequestTracker::~RequestTracker() {
  if (lora_ != nullptr && !finished_) lora_->Finished(params_.lora_name, running_);
}

void RequestTracker::OnRouted(uint32_t engine) { engine_.store(engine, std::memory_order_relaxed); }

void RequestTracker::OnOutput(const proto::EngineCoreOutput& output, uint32_t engine, double engine_timestamp,
                              Clock::time_point now) {
  if (!metrics_ || finished_) return;
  engine_.store(engine, std::memory_order_relaxed);
  for (const proto::EngineCoreEvent& e : output.events) {
    // The first of each: a preempted request is queued and scheduled again.
    if (e.type == kEventQueued && queued_ts_ == 0.0) queued_ts_ = e.timestamp;
    if (e.type == kEventScheduled && scheduled_ts_ == 0.0) scheduled_ts_ = e.timestamp;
    if (lora_ != nullptr && e.type == kEventScheduled && !running_) lora_->Scheduled(params_.lora_name);
    if (lora_ != nullptr && e.type == kEventPreempted && running_) lora_->Preempted(params_.lora_name);
    if (e.type == kEventScheduled) running_ = true;
    if (e.type == kEventPreempted) running_ = false;
  }
  const auto n = static_cast<int32_t>(output.new_token_ids.size());
  if (n == 0) return;
  if (first_token_ts_ == 0.0) {
    metrics_->RecordFirstToken(engine, prompt_tokens_, Seconds(now - arrival_));
    first_token_ts_ = engine_timestamp;
  } else {
    metrics_->RecordInterTokenLatency(engine, engine_timestamp - last_token_ts_);
  }
  last_token_ts_ = engine_timestamp;
  generated_ += n;
  metrics_->RecordGenerationTokens(engine, n);
}

void RequestTracker::OnFinished(proto::FinishReason reason, Clock::time_point now) {
  if (!metrics_ || finished_) return;
  finished_ = true;
  if (lora_ != nullptr) lora_->Finished(params_.lora_name, running_);
  const int64_t engine = engine_.load(std::memory_order_relaxed);
  if (engine < 0) return;
  FinishedRequest r;
  r.reason = reason;
  r.e2e_latency_s = Seconds(now - arrival_);
  r.prompt_tokens = prompt_tokens_;
  r.generation_tokens = generated_;
  r.n = params_.n;
  r.max_tokens = params_.max_tokens;
  r.max_model_len = params_.max_model_len;
  if (queued_ts_ > 0.0 && scheduled_ts_ > 0.0) r.queue_s = scheduled_ts_ - queued_ts_;
  if (first_token_ts_ > 0.0) {
    if (scheduled_ts_ > 0.0) {
      r.prefill_s = first_token_ts_ - scheduled_ts_;
      r.inference_s = last_token_ts_ - scheduled_ts_;
    }
    r.decode_s = last_token_ts_ - first_token_ts_;
    if (generated_ > 1) r.time_per_output_token_s = *r.decode_s / (generated_ - 1);
  }
  metrics_->RecordFinished(static_cast<uint32_t>(engine), r);
}

}  // namespace llmserve::frontend::metrics
