#pragma once
// RequestTracker: follows one engine request from its arrival at the frontend
// to its finish and reports what it measured to FrontendMetrics (vLLM's
// RequestStateStats). Two clocks, never mixed:
//  - the frontend's steady clock for TTFT and end-to-end latency;
//  - the engine's monotonic clock (EngineCoreOutputs.timestamp and the
//    QUEUED/SCHEDULED/PREEMPTED event stamps) for inter-token latency and the
//    queue, prefill, decode and inference phases, as differences only.
// An adapter request also moves between waiting and running in
// vllm:lora_requests_info (lora_requests_info.h). A tracker without metrics
// does nothing. Not thread-safe except OnRouted:
// the owner serialises the other calls.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "frontend/metrics/frontend_metrics.h"
#include "proto/engine_core_output.h"

namespace llmserve::frontend::metrics {

// What a tracker reports about its request at the finish besides timing.
struct TrackedParams {
  int32_t n = 1;
  int32_t max_tokens = 0;     // as the engine applies it
  int32_t max_model_len = 0;  // the engines' (0: unknown)
  std::string lora_name;      // its LoRA adapter ("": the base model)
};

class RequestTracker {
 public:
  using Clock = std::chrono::steady_clock;

  RequestTracker() = default;  // records nothing
  // `prompt_tokens` counts once the first token arrives; `arrival` is when the frontend accepted the request.
  RequestTracker(FrontendMetrics* metrics, int32_t prompt_tokens, Clock::time_point arrival,
                 TrackedParams params = {});
  // A tracker dropped before OnFinished ends its request's LoRA state.
  ~RequestTracker();
  RequestTracker(const RequestTracker&) = delete;
  RequestTracker& operator=(const RequestTracker&) = delete;

  // The engine the request was sent to (any thread).
  void OnRouted(uint32_t engine);
  // One output of the request from `engine`, stamped `engine_timestamp` by it,
  // arriving here at `now`.
  void OnOutput(const proto::EngineCoreOutput& output, uint32_t engine, double engine_timestamp, Clock::time_point now);
  // The request ended; only the first call counts. Nothing is recorded when
  // the engine is unknown (the request never reached one).
  void OnFinished(proto::FinishReason reason, Clock::time_point now);

  // OnFinished has been called.
  bool finished() const { return finished_; }

 private:
  FrontendMetrics* metrics_ = nullptr;
  int32_t prompt_tokens_ = 0;
  Clock::time_point arrival_{};
  TrackedParams params_;
  std::atomic<int64_t> engine_{-1};
  int32_t generated_ = 0;
  bool finished_ = false;
  // Where vllm:lora_requests_info counts it (null: no adapter or no LoRA);
  // running between SCHEDULED and PREEMPTED or the finish.
  LoraRequestsInfo* lora_ = nullptr;
  bool running_ = false;
  // Engine-clock stamps; 0 = not seen.
  double queued_ts_ = 0.0;
  double scheduled_ts_ = 0.0;
  double first_token_ts_ = 0.0;
  double last_token_ts_ = 0.0;
};

}  // namespace llmserve::frontend::metrics
