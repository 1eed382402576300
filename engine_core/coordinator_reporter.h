#pragma once
// CoordinatorReporter: what one engine tells the DP coordinator, without
// sockets (EngineCoreProc sends the reports it returns).
//  * Load: after input handling and after every step, an EngineLoad when the
//    waiting / running counts, waiting tokens or KV usage changed.
//  * Waves (vLLM V1 §3, dense variant): the engine is "running" from its first
//    request (or a START_DP_WAVE) until it has no requests; then it reports
//    wave_complete=w and moves to wave w+1. A request stamped with an older
//    wave reaching an idle engine means its frontend missed the completion:
//    the engine reports start_wave so the coordinator wakes the other ranks.

#include <cstdint>
#include <optional>
#include <vector>

#include "proto/coordinator.pb.h"
#include "proto/engine_core_output.h"
#include "proto/engine_core_request.h"

namespace llmserve::engine_core {

class CoordinatorReporter {
 public:
  explicit CoordinatorReporter(uint32_t rank) : rank_(rank) {}

  // A request stamped with `request_wave` arrived; returns a start_wave report to send, if any.
  std::optional<proto::EngineReport> OnRequest(int64_t request_wave);

  // The coordinator broadcast START_DP_WAVE.
  void OnStartWave(const proto::StartDpWave& start);

  // After input handling or a step: `stats` are the scheduler's, `has_requests`
  // whether it holds any. Returns the reports to send, in order.
  std::vector<proto::EngineReport> Update(const proto::SchedulerStats& stats, bool has_requests);

  // The wave this engine is in.
  int64_t current_wave() const { return wave_; }
  // Whether this engine considers its wave running.
  bool running() const { return running_; }

 private:
  uint32_t rank_;
  int64_t wave_ = 0;
  bool running_ = false;
  std::optional<proto::EngineLoad> last_sent_;
};

}  // namespace llmserve::engine_core
