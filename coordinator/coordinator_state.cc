#include "coordinator/coordinator_state.h"

#include <glog/logging.h>

#include <algorithm>

namespace llmserve::coordinator {

namespace {
constexpr uint32_t kMaxRanks = 65536;  // ranks are 2-byte ZMQ identities
// Waves count idle periods from 0, one at a time: a larger number is corrupt,
// and past 2^63 it would not fit START_DP_WAVE's signed wave.
constexpr uint64_t kMaxWave = uint64_t{1} << 62;
}  // namespace

CoordinatorState::CoordinatorState(CoordinatorConfig config)
    : config_(config), loads_(config.num_ranks), completed_wave_(config.num_ranks, -1), down_(config.num_ranks) {
  for (uint32_t r = 0; r < config_.num_ranks; ++r) StartTracking(r);
}

void CoordinatorState::StartTracking(uint32_t rank) {
  loads_[rank].set_data_parallel_rank(rank);
  // Alive until seen to die or leave: a rank that has not reported yet is
  // starting or idle, and frontends probe ranks shown as not alive.
  loads_[rank].set_alive(true);
}

void CoordinatorState::Track(uint32_t rank) {
  while (loads_.size() <= rank) {
    loads_.emplace_back();
    StartTracking(static_cast<uint32_t>(loads_.size() - 1));
    completed_wave_.push_back(-1);
    down_.push_back(false);
    Admit(static_cast<uint32_t>(loads_.size() - 1));
  }
}

bool CoordinatorState::Counts(uint32_t rank) const {
  if (down_[rank]) return false;
  if (membership_.epoch() == 0) return true;
  const auto& active = membership_.active_ranks();
  return std::find(active.begin(), active.end(), rank) != active.end();
}

void CoordinatorState::Admit(uint32_t rank) {
  const auto current = static_cast<int64_t>(current_wave_);
  completed_wave_[rank] = std::max(completed_wave_[rank], engines_running_ ? current : current - 1);
}

void CoordinatorState::MaybeCompleteWave() {
  int64_t lowest = -1;
  bool any = false;
  for (uint32_t r = 0; r < completed_wave_.size(); ++r) {
    if (!Counts(r)) continue;
    if (completed_wave_[r] < static_cast<int64_t>(current_wave_)) return;
    lowest = any ? std::min(lowest, completed_wave_[r]) : completed_wave_[r];
    any = true;
  }
  if (!any) return;
  current_wave_ = static_cast<uint64_t>(lowest) + 1;
  engines_running_ = false;
  wave_changed_ = true;
  VLOG(1) << "coordinator: every rank idle; wave " << current_wave_;
}

void CoordinatorState::OnMembership(const proto::Membership& membership) {
  for (uint32_t rank : membership.active_ranks())
    if (rank >= kMaxRanks) {
      LOG(WARNING) << "coordinator: membership names impossible rank " << rank << "; ignored";
      return;
    }
  if (membership.tracked_ranks() > kMaxRanks) {
    LOG(WARNING) << "coordinator: membership tracks " << membership.tracked_ranks() << " ranks; ignored";
    return;
  }
  if (membership.epoch() <= membership_.epoch() && membership_.epoch() != 0) return;
  const proto::Membership before = membership_;
  membership_ = membership;
  if (membership_.tracked_ranks() > 0) Track(membership_.tracked_ranks() - 1);
  for (uint32_t rank : membership_.active_ranks()) {
    const bool was_active = before.epoch() == 0 ? rank < config_.num_ranks
                                                : std::find(before.active_ranks().begin(), before.active_ranks().end(),
                                                            rank) != before.active_ranks().end();
    Track(rank);
    if (!was_active) Admit(rank);
  }
  membership_changed_ = true;
  MaybeCompleteWave();  // a removed rank may have been the last one holding the wave
}

void CoordinatorState::OnRankDown(uint32_t rank) {
  if (rank >= loads_.size()) return;
  down_[rank] = true;
  proto::EngineLoad idle;
  idle.set_data_parallel_rank(rank);
  loads_[rank] = idle;  // alive = false, nothing in flight
  loads_changed_ = true;
  MaybeCompleteWave();
}

bool CoordinatorState::OnEngineLoad(const proto::EngineLoad& load) {
  const uint32_t rank = load.data_parallel_rank();
  if (rank >= loads_.size()) {
    LOG(WARNING) << "coordinator: load report from unknown rank " << rank;
    return false;
  }
  if (down_[rank]) {
    down_[rank] = false;  // restarted: it takes part from the next wave on
    Admit(rank);
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
  const uint64_t wave = notice.has_wave_complete() ? notice.wave_complete() : notice.start_wave();
  if (wave > kMaxWave) {
    LOG(WARNING) << "coordinator: wave notice from rank " << rank << " names impossible wave " << wave << "; ignored";
    return std::nullopt;
  }
  if (notice.has_wave_complete()) {
    const auto w = static_cast<int64_t>(notice.wave_complete());
    completed_wave_[rank] = std::max(completed_wave_[rank], w);
    MaybeCompleteWave();
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
  if (membership_.epoch() != 0) *s.mutable_membership() = membership_;
  return s;
}

std::optional<proto::LoadSnapshot> CoordinatorState::MaybePublish(Clock::time_point now) {
  if (TimeUntilNextPublish(now).count() > 0) return std::nullopt;
  loads_changed_ = false;
  wave_changed_ = false;
  membership_changed_ = false;
  last_publish_ = now;
  return MakeSnapshot();
}

std::chrono::milliseconds CoordinatorState::TimeUntilNextPublish(Clock::time_point now) const {
  using std::chrono::milliseconds;
  if (wave_changed_ || membership_changed_ || !last_publish_) return milliseconds(0);
  const auto since = std::chrono::duration_cast<milliseconds>(now - *last_publish_);
  const milliseconds gap = loads_changed_ ? config_.publish_interval : config_.heartbeat_interval;
  return std::max(milliseconds(0), gap - since);
}

}  // namespace llmserve::coordinator
