// CoordinatorState on a clock the test sets: publish pacing and the DP wave protocol.
#include <gtest/gtest.h>

#include "coordinator/coordinator_state.h"

namespace llmserve::coordinator {
namespace {

using namespace std::chrono_literals;
using Clock = CoordinatorState::Clock;

proto::EngineLoad Load(uint32_t rank, uint32_t waiting, uint32_t running, uint64_t tokens) {
  proto::EngineLoad l;
  l.set_data_parallel_rank(rank);
  l.set_num_waiting_reqs(waiting);
  l.set_num_running_reqs(running);
  l.set_num_waiting_tokens(tokens);
  return l;
}

proto::WaveNotice Complete(uint32_t rank, uint64_t wave) {
  proto::WaveNotice n;
  n.set_data_parallel_rank(rank);
  n.set_wave_complete(wave);
  return n;
}

proto::FirstRequest First(uint32_t rank, uint64_t wave) {
  proto::FirstRequest f;
  f.set_data_parallel_rank(rank);
  f.set_wave(wave);
  return f;
}

TEST(CoordinatorStateTest, PublishesAtMostEveryIntervalWhileChangingAndHeartbeatsOtherwise) {
  CoordinatorState s({2, 100ms, 1000ms});
  const auto t0 = Clock::now();
  auto first = s.MaybePublish(t0);  // the initial snapshot goes out at once
  ASSERT_TRUE(first);
  EXPECT_EQ(first->engines_size(), 2);
  EXPECT_EQ(first->sequence(), 1u);
  EXPECT_FALSE(first->engines(0).alive());

  EXPECT_TRUE(s.OnEngineLoad(Load(1, 3, 2, 500)));
  EXPECT_FALSE(s.MaybePublish(t0 + 50ms));
  EXPECT_EQ(s.TimeUntilNextPublish(t0 + 50ms), 50ms);
  auto snap = s.MaybePublish(t0 + 100ms);
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->sequence(), 2u);
  EXPECT_EQ(snap->engines(1).num_waiting_reqs(), 3u);
  EXPECT_EQ(snap->engines(1).num_running_reqs(), 2u);
  EXPECT_EQ(snap->engines(1).num_waiting_tokens(), 500u);
  EXPECT_TRUE(snap->engines(1).alive());

  // Nothing new: the next one is a heartbeat a second later.
  EXPECT_FALSE(s.MaybePublish(t0 + 300ms));
  EXPECT_EQ(s.TimeUntilNextPublish(t0 + 300ms), 800ms);
  auto beat = s.MaybePublish(t0 + 1100ms);
  ASSERT_TRUE(beat);
  EXPECT_EQ(beat->engines(1).num_waiting_tokens(), 500u);
  EXPECT_FALSE(s.OnEngineLoad(Load(7, 1, 1, 1)));  // unknown rank
}

TEST(CoordinatorStateTest, FirstRequestStartsAWaveExcludingItsRank) {
  CoordinatorState s({3, 100ms, 1000ms});
  const auto t0 = Clock::now();
  (void)s.MaybePublish(t0);
  auto start = s.OnFirstRequest(First(1, 0));
  ASSERT_TRUE(start);
  EXPECT_EQ(start->wave, 0);
  EXPECT_EQ(start->exclude_engine_index, 1);
  EXPECT_TRUE(s.engines_running());
  // Published immediately, not after the interval.
  auto snap = s.MaybePublish(t0 + 1ms);
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->engines_running());
  // A second first-request while running starts nothing.
  EXPECT_FALSE(s.OnFirstRequest(First(2, 0)));
}

TEST(CoordinatorStateTest, WaveCompletesOnlyWhenEveryRankReportedIt) {
  CoordinatorState s({3, 100ms, 1000ms});
  (void)s.OnFirstRequest(First(0, 0));
  s.OnWaveNotice(Complete(0, 0));
  s.OnWaveNotice(Complete(2, 0));
  EXPECT_TRUE(s.engines_running());
  EXPECT_EQ(s.current_wave(), 0u);
  s.OnWaveNotice(Complete(1, 0));
  EXPECT_FALSE(s.engines_running());
  EXPECT_EQ(s.current_wave(), 1u);
  auto snap = s.MaybePublish(Clock::now());
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->current_wave(), 1u);
  EXPECT_FALSE(snap->engines_running());
  // A frontend that stamped the completed wave 0: nobody is excluded.
  auto start = s.OnFirstRequest(First(2, 0));
  ASSERT_TRUE(start);
  EXPECT_EQ(start->wave, 1);
  EXPECT_EQ(start->exclude_engine_index, -1);
}

TEST(CoordinatorStateTest, EngineStartWaveIsAdoptedWhenNewerOrIdle) {
  CoordinatorState s({2, 100ms, 1000ms});
  proto::WaveNotice n;
  n.set_data_parallel_rank(1);
  n.set_start_wave(0);
  auto start = s.OnWaveNotice(n);  // idle in wave 0: start it
  ASSERT_TRUE(start);
  EXPECT_EQ(start->wave, 0);
  EXPECT_EQ(start->exclude_engine_index, 1);
  EXPECT_FALSE(s.OnWaveNotice(n));  // already running wave 0
  n.set_start_wave(3);
  start = s.OnWaveNotice(n);  // a newer wave
  ASSERT_TRUE(start);
  EXPECT_EQ(start->wave, 3);
  EXPECT_EQ(s.current_wave(), 3u);
  n.set_data_parallel_rank(9);
  EXPECT_FALSE(s.OnWaveNotice(n));  // unknown rank
}

}  // namespace
}  // namespace llmserve::coordinator
