#include "engine_core/coordinator_reporter.h"

#include <algorithm>

namespace llmserve::engine_core {

std::optional<proto::EngineReport> CoordinatorReporter::OnRequest(int64_t request_wave) {
  std::optional<proto::EngineReport> report;
  if (request_wave > wave_) {
    wave_ = request_wave;
  } else if (request_wave < wave_ && !running_) {
    report.emplace();
    report->mutable_wave()->set_data_parallel_rank(rank_);
    report->mutable_wave()->set_start_wave(static_cast<uint64_t>(wave_));
  }
  running_ = true;
  return report;
}

void CoordinatorReporter::OnStartWave(const proto::StartDpWave& start) {
  if (start.exclude_engine_index == static_cast<int32_t>(rank_) || start.wave < wave_) return;
  wave_ = start.wave;
  running_ = true;
}

std::vector<proto::EngineReport> CoordinatorReporter::Update(const proto::SchedulerStats& stats, bool has_requests) {
  std::vector<proto::EngineReport> reports;
  proto::EngineLoad load;
  load.set_data_parallel_rank(rank_);
  load.set_num_waiting_reqs(static_cast<uint32_t>(std::max(stats.num_waiting_reqs, 0)));
  load.set_num_running_reqs(static_cast<uint32_t>(std::max(stats.num_running_reqs, 0)));
  load.set_num_waiting_tokens(static_cast<uint64_t>(std::max<int64_t>(stats.num_waiting_tokens, 0)));
  load.set_kv_cache_usage(stats.kv_cache_usage);
  load.set_step_counter(static_cast<uint64_t>(std::max<int64_t>(stats.step_counter, 0)));
  load.set_current_wave(static_cast<uint64_t>(wave_));
  load.set_alive(true);
  const bool changed = !last_sent_ || last_sent_->num_waiting_reqs() != load.num_waiting_reqs() ||
                       last_sent_->num_running_reqs() != load.num_running_reqs() ||
                       last_sent_->num_waiting_tokens() != load.num_waiting_tokens() ||
                       last_sent_->kv_cache_usage() != load.kv_cache_usage();
  if (changed) {
    *reports.emplace_back().mutable_load() = load;
    last_sent_ = load;
  }
  if (running_ && !has_requests) {
    auto* wave = reports.emplace_back().mutable_wave();
    wave->set_data_parallel_rank(rank_);
    wave->set_wave_complete(static_cast<uint64_t>(wave_));
    ++wave_;
    running_ = false;
  }
  return reports;
}

}  // namespace llmserve::engine_core
