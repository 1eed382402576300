// libFuzzer target over the coordinator's control messages: the input is a
// sequence of messages, each a kind byte (even: a frontend or launcher
// FrontendNotice, odd: an engine's EngineReport), a length byte and that
// many bytes of protobuf. Each one that parses is applied to a
// CoordinatorState of 4 ranks as Coordinator::Handle* applies it, and a
// snapshot is taken 60 ms later each time. Asserts: snapshots hold one load
// per tracked rank, the wave never goes back, a START_DP_WAVE carries the
// current wave and excludes at most a tracked rank.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <glog/logging.h>

#include "coordinator/coordinator_state.h"
#include "proto/coordinator.pb.h"
#include "tests/fuzz_require.h"

namespace llmserve::coordinator::control_fuzz {

using llmserve::testing::FuzzRequire;

void CheckWave(const CoordinatorState& state, const std::optional<proto::StartDpWave>& wave) {
  if (!wave) return;
  FuzzRequire(wave->wave >= 0 && static_cast<uint64_t>(wave->wave) == state.current_wave(),
              "START_DP_WAVE is not the current wave");
  FuzzRequire(wave->exclude_engine_index >= -1 && wave->exclude_engine_index < static_cast<int64_t>(state.num_ranks()),
              "START_DP_WAVE excludes an unknown rank");
}

}  // namespace llmserve::coordinator::control_fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_minloglevel = 2;  // the state warns of every unknown rank
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = llmserve::coordinator::control_fuzz;
  namespace proto = llmserve::proto;
  using llmserve::coordinator::CoordinatorState;
  llmserve::coordinator::CoordinatorConfig config;
  config.num_ranks = 4;
  CoordinatorState state(config);
  auto now = CoordinatorState::Clock::time_point{};
  uint64_t wave = state.current_wave();
  for (size_t at = 0; at + 2 <= size;) {
    const bool from_engine = data[at] & 1;
    const size_t n = std::min<size_t>(data[at + 1], size - at - 2);
    const auto* body = data + at + 2;
    at += 2 + n;
    if (from_engine) {
      proto::EngineReport report;
      if (!report.ParseFromArray(body, static_cast<int>(n))) continue;
      if (report.has_load()) {
        state.OnEngineLoad(report.load());
      } else if (report.has_wave()) {
        f::CheckWave(state, state.OnWaveNotice(report.wave()));
      }
    } else {
      proto::FrontendNotice notice;
      if (!notice.ParseFromArray(body, static_cast<int>(n))) continue;
      if (notice.has_first_request()) {
        f::CheckWave(state, state.OnFirstRequest(notice.first_request()));
      } else if (notice.has_membership()) {
        state.OnMembership(notice.membership());
      } else if (notice.has_rank_down()) {
        state.OnRankDown(notice.rank_down());
      }
    }
    f::FuzzRequire(state.current_wave() >= wave, "the wave went back");
    wave = state.current_wave();
    now += std::chrono::milliseconds(60);
    if (auto snapshot = state.MaybePublish(now)) {
      f::FuzzRequire(static_cast<size_t>(snapshot->engines_size()) == state.num_ranks(),
                     "a snapshot without every rank");
      f::FuzzRequire(snapshot->current_wave() == state.current_wave(), "a snapshot with another wave");
    }
  }
  return 0;
}
