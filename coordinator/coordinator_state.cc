#include "coordinator/coordinator_state.h"

#include <glog/logging.h>

#include <algorithm>

namespace llmserve::coordinator {

CoordinatorState::CoordinatorState(CoordinatorConfig config)
    : config_(config), loads_(config.num_ranks), completed_wave_(config.num_ranks, -1) {
  for (uint32_t r = 0; r < config_.num_ranks; ++r) loads_[r].set_data_parallel_rank(r);
}

bool CoordinatorState::OnEngineLoad(const proto::EngineLoad& load) {
  const uint32_t rank = load.data_parallel_rank();
  if (rank >= loads_.size()) {
    LOG(WARNING) << "coordinator: load report from unknown rank " << rank;
    return false;
  }
  proto::EngineLoad& mine = loads_[rank];
  mine = load;
  mine.set_alive(true);
  loads_changed_ = true;
  return true;
}

std::optional<proto::StartDpWave> CoordinatorState::OnWaveNotice(const proto::WaveNotice& notice) {
  const uint32_t rank = notice.data_parallel_rank();
  if (rank >= loads_.size()) {
    LOG(WARNING) << "coordinator: wave notice from unknown rank " << rank;
    return std::nullopt;
  }
  if (notice.has_wave_complete()) {
    const auto w = static_cast<int64_t>(notice.wave_complete());
    completed_wave_[rank] = std::max(completed_wave_[rank], w);
    const bool all_done = std::all_of(completed_wave_.begin(), completed_wave_.end(),
                                      [&](int64_t c) { return c >= static_cast<int64_t>(current_wave_); });
    if (all_done) {
      current_wave_ = static_cast<uint64_t>(*std::min_element(completed_wave_.begin(), completed_wave_.end())) + 1;
      engines_running_ = false;
      wave_changed_ = true;
      VLOG(1) << "coordinator: every rank idle; wave " << current_wave_;
    }
    return std::nullopt;
  }
  if (notice.has_start_wave()) {
    const uint64_t w = notice.start_wave();
    if (w > current_wave_ || (w == current_wave_ && !engines_running_)) {
      current_wave_ = w;
      engines_running_ = true;
      wave_changed_ = true;
      return proto::StartDpWave{static_cast<int64_t>(w), static_cast<int32_t>(rank)};
    }
  }
  return std::nullopt;
}

std::optional<proto::StartDpWave> CoordinatorState::OnFirstRequest(const proto::FirstRequest& request) {
  if (engines_running_) return std::nullopt;
  // A request stamped with a completed wave did not start this one on its rank.
  const int32_t exclude = request.wave() < current_wave_ || request.data_parallel_rank() >= loads_.size()
                              ? -1
                              : static_cast<int32_t>(request.data_parallel_rank());
  engines_running_ = true;
  wave_changed_ = true;
  return proto::StartDpWave{static_cast<int64_t>(current_wave_), exclude};
}

proto::LoadSnapshot CoordinatorState::MakeSnapshot() {
  proto::LoadSnapshot s;
  for (const auto& l : loads_) *s.add_engines() = l;
  s.set_current_wave(current_wave_);
  s.set_engines_running(engines_running_);
  s.set_sequence(++sequence_);
  return s;
}

std::optional<proto::LoadSnapshot> CoordinatorState::MaybePublish(Clock::time_point now) {
  if (TimeUntilNextPublish(now).count() > 0) return std::nullopt;
  loads_changed_ = false;
  wave_changed_ = false;
  last_publish_ = now;
  return MakeSnapshot();
}

std::chrono::milliseconds CoordinatorState::TimeUntilNextPublish(Clock::time_point now) const {
  using std::chrono::milliseconds;
  if (wave_changed_ || !last_publish_) return milliseconds(0);
  const auto since = std::chrono::duration_cast<milliseconds>(now - *last_publish_);
  const milliseconds gap = loads_changed_ ? config_.publish_interval : config_.heartbeat_interval;
  return std::max(milliseconds(0), gap - since);
}

}  // namespace llmserve::coordinator
