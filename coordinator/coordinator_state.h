#pragma once
// CoordinatorState: the DP coordinator's bookkeeping without sockets (vLLM V1
// §3), so tests can drive it with a clock they set.
//
// Load: the latest EngineLoad of every rank. While loads change, at most one
// snapshot per `publish_interval`; with nothing new, a heartbeat snapshot every
// `heartbeat_interval`. Wave changes are published at once.
//
// Waves count global transitions from running to idle. Dense models have no
// DP all-reduce to agree that every rank is idle, so the coordinator is the
// consensus: each engine reports wave_complete=w when it goes idle in wave w
// (and moves to w+1 itself); once every rank has completed the current wave
// the coordinator advances to the next wave and marks the engines idle.
//  * a frontend's first request while idle (FirstRequest) starts the wave:
//    running=true and START_DP_WAVE(current_wave, exclude) goes to every
//    engine, excluding the rank that already has the request unless the
//    frontend stamped a wave that has since completed;
//  * an engine that receives a request stamped with a completed wave reports
//    start_wave=its wave; a newer wave (or the current one while idle) is
//    adopted and broadcast with that engine excluded.
// An MoE path that needs lockstep dummy steps runs them between
// START_DP_WAVE and its wave_complete.

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "proto/coordinator.pb.h"
#include "proto/engine_core_request.h"

namespace llmserve::coordinator {

struct CoordinatorConfig {
  uint32_t num_ranks = 1;                                 // DP ranks tracked
  std::chrono::milliseconds publish_interval{100};        // minimum gap between load publishes
  std::chrono::milliseconds heartbeat_interval{1000};     // publish gap when nothing changes
};

class CoordinatorState {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CoordinatorState(CoordinatorConfig config);

  // Stores rank `load.data_parallel_rank()`'s load; ignores unknown ranks (returns false).
  bool OnEngineLoad(const proto::EngineLoad& load);

  // Applies an engine's wave notice; returns a START_DP_WAVE to broadcast, if any.
  std::optional<proto::StartDpWave> OnWaveNotice(const proto::WaveNotice& notice);

  // Applies a frontend's first request of an idle period; returns the START_DP_WAVE to broadcast, if any.
  std::optional<proto::StartDpWave> OnFirstRequest(const proto::FirstRequest& request);

  // The snapshot to publish at `now`, or nullopt when it is not time yet.
  std::optional<proto::LoadSnapshot> MaybePublish(Clock::time_point now);

  // How long after `now` MaybePublish can next return a snapshot.
  std::chrono::milliseconds TimeUntilNextPublish(Clock::time_point now) const;

  uint64_t current_wave() const { return current_wave_; }
  bool engines_running() const { return engines_running_; }

 private:
  proto::LoadSnapshot MakeSnapshot();

  CoordinatorConfig config_;
  std::vector<proto::EngineLoad> loads_;        // rank order
  std::vector<int64_t> completed_wave_;         // last wave each rank reported complete (-1 none)
  uint64_t current_wave_ = 0;
  bool engines_running_ = false;
  bool loads_changed_ = false;
  bool wave_changed_ = false;
  uint64_t sequence_ = 0;
  std::optional<Clock::time_point> last_publish_;
};

}  // namespace llmserve::coordinator
