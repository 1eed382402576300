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
//
// Membership (elastic scaling): the launcher names the active ranks; ranks
// outside it are dropped from snapshots' loads only in that they do not count
// for wave consensus (their loads are still published, so the launcher can
// see a removed rank drain). A rank whose process exited (OnRankDown) does not
// block consensus either until it reports load again. A rank that joins or
// comes back takes part from the next wave on.

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

  // Applies the launcher's membership (older epochs are ignored); the next
  // snapshot goes out at once. Tracks ranks up to the highest one named.
  void OnMembership(const proto::Membership& membership);

  // The launcher saw `rank`'s process exit: it stops counting for wave
  // consensus (a wave waiting only on it completes) and its load reads zero.
  void OnRankDown(uint32_t rank);

  // The snapshot to publish at `now`, or nullopt when it is not time yet.
  std::optional<proto::LoadSnapshot> MaybePublish(Clock::time_point now);

  // How long after `now` MaybePublish can next return a snapshot.
  std::chrono::milliseconds TimeUntilNextPublish(Clock::time_point now) const;

  uint64_t current_wave() const { return current_wave_; }
  // Ranks tracked (the highest rank ever named + 1).
  size_t num_ranks() const { return loads_.size(); }
  // The membership in effect.
  const proto::Membership& membership() const { return membership_; }
  bool engines_running() const { return engines_running_; }

 private:
  proto::LoadSnapshot MakeSnapshot();
  // Grows the per-rank tables to hold `rank`.
  void Track(uint32_t rank);
  // Initialises the load entry of a newly tracked rank.
  void StartTracking(uint32_t rank);
  // Whether `rank` takes part in wave consensus.
  bool Counts(uint32_t rank) const;
  // A rank that (re)joins: done with every wave before the current one, and
  // with the current one too when it is already running without it.
  void Admit(uint32_t rank);
  // Advances the wave when every counting rank completed the current one.
  void MaybeCompleteWave();

  CoordinatorConfig config_;
  std::vector<proto::EngineLoad> loads_;        // rank order
  std::vector<int64_t> completed_wave_;         // last wave each rank reported complete (-1 none)
  std::vector<bool> down_;                      // process exited; not reported since
  proto::Membership membership_;                // epoch 0: all ranks active
  bool membership_changed_ = false;
  uint64_t current_wave_ = 0;
  bool engines_running_ = false;
  bool loads_changed_ = false;
  bool wave_changed_ = false;
  uint64_t sequence_ = 0;
  std::optional<Clock::time_point> last_publish_;
};

}  // namespace llmserve::coordinator
