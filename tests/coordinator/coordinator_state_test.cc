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
  EXPECT_TRUE(first->engines(0).alive());  // not seen to die: frontends need not probe it

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

proto::Membership Members(uint64_t epoch, std::vector<uint32_t> active, bool scaling, uint32_t tracked) {
  proto::Membership m;
  m.set_epoch(epoch);
  for (uint32_t r : active) m.add_active_ranks(r);
  m.set_scaling(scaling);
  m.set_tracked_ranks(tracked);
  return m;
}

TEST(CoordinatorStateTest, MembershipIsPublishedAtOnceAndTracksJoiningRanks) {
  CoordinatorState s({2, 100ms, 1000ms});
  const auto t0 = Clock::now();
  auto first = s.MaybePublish(t0);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->has_membership()) << "no membership until the launcher sends one";
  EXPECT_FALSE(s.OnEngineLoad(Load(3, 1, 0, 10))) << "rank 3 is not tracked yet";
  s.OnMembership(Members(1, {0, 1}, true, 4));  // scale-up to 4 starts
  auto snap = s.MaybePublish(t0 + 1ms);         // at once, not after the interval
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->membership().epoch(), 1u);
  EXPECT_TRUE(snap->membership().scaling());
  EXPECT_EQ(snap->engines_size(), 4);
  EXPECT_TRUE(s.OnEngineLoad(Load(3, 1, 0, 10))) << "a joining rank reports before it is active";
  s.OnMembership(Members(1, {0}, false, 1));  // a stale epoch is ignored
  EXPECT_EQ(s.membership().active_ranks_size(), 2);
  s.OnMembership(Members(2, {0, 1, 2, 3}, false, 4));
  snap = s.MaybePublish(t0 + 2ms);
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->membership().active_ranks_size(), 4);
  EXPECT_FALSE(snap->membership().scaling());
  EXPECT_EQ(snap->engines(3).num_waiting_reqs(), 1u);
}

TEST(CoordinatorStateTest, RemovedRanksDoNotHoldTheWave) {
  CoordinatorState s({4, 100ms, 1000ms});
  (void)s.OnFirstRequest(First(0, 0));
  s.OnWaveNotice(Complete(0, 0));
  s.OnWaveNotice(Complete(1, 0));
  EXPECT_TRUE(s.engines_running()) << "ranks 2 and 3 are still running";
  s.OnMembership(Members(1, {0, 1}, true, 4));  // scale-down to 2: ranks 2 and 3 leave
  EXPECT_FALSE(s.engines_running());
  EXPECT_EQ(s.current_wave(), 1u);
  // A wave among the two remaining ranks completes without the removed ones.
  (void)s.OnFirstRequest(First(1, 1));
  s.OnWaveNotice(Complete(0, 1));
  EXPECT_TRUE(s.engines_running());
  s.OnWaveNotice(Complete(1, 1));
  EXPECT_FALSE(s.engines_running());
  EXPECT_EQ(s.current_wave(), 2u);
}

TEST(CoordinatorStateTest, JoiningRankTakesPartFromTheNextWave) {
  CoordinatorState s({2, 100ms, 1000ms});
  (void)s.OnFirstRequest(First(0, 0));  // wave 0 running on ranks 0 and 1
  s.OnMembership(Members(1, {0, 1, 2}, false, 3));
  s.OnWaveNotice(Complete(0, 0));
  s.OnWaveNotice(Complete(1, 0));
  EXPECT_FALSE(s.engines_running()) << "rank 2 joined mid-wave and does not hold it";
  EXPECT_EQ(s.current_wave(), 1u);
  (void)s.OnFirstRequest(First(0, 1));
  s.OnWaveNotice(Complete(0, 1));
  s.OnWaveNotice(Complete(1, 1));
  EXPECT_TRUE(s.engines_running()) << "from wave 1 on rank 2 counts";
  s.OnWaveNotice(Complete(2, 1));
  EXPECT_FALSE(s.engines_running());
}

TEST(CoordinatorStateTest, DeadRankDoesNotBlockTheWaveUntilItReportsAgain) {
  CoordinatorState s({3, 100ms, 1000ms});
  ASSERT_TRUE(s.OnEngineLoad(Load(2, 4, 1, 100)));
  (void)s.OnFirstRequest(First(0, 0));
  s.OnWaveNotice(Complete(0, 0));
  s.OnWaveNotice(Complete(1, 0));
  EXPECT_TRUE(s.engines_running());
  s.OnRankDown(2);  // its process exited
  EXPECT_FALSE(s.engines_running());
  EXPECT_EQ(s.current_wave(), 1u);
  auto snap = s.MaybePublish(Clock::now());
  ASSERT_TRUE(snap);
  EXPECT_FALSE(snap->engines(2).alive());
  EXPECT_EQ(snap->engines(2).num_waiting_reqs(), 0u);
  // Restarted: it reports again and counts from the next wave on.
  ASSERT_TRUE(s.OnEngineLoad(Load(2, 0, 0, 0)));
  (void)s.OnFirstRequest(First(0, 1));
  s.OnWaveNotice(Complete(0, 1));
  s.OnWaveNotice(Complete(1, 1));
  EXPECT_TRUE(s.engines_running());
  s.OnWaveNotice(Complete(2, 1));
  EXPECT_FALSE(s.engines_running());
  EXPECT_EQ(s.current_wave(), 2u);
}

// Found with coordinator_control_fuzzer (UBSan and its START_DP_WAVE check on
// a crafted input): a wave number near 2^63 made the wave
// overflow (a negative START_DP_WAVE, signed overflow in Admit). Such notices
// are ignored; the protocol goes on as before.
TEST(CoordinatorStateTest, ImpossibleWavesAreIgnored) {
  CoordinatorState s({2, 100ms, 1000ms});
  for (uint32_t r = 0; r < 2; ++r) EXPECT_FALSE(s.OnWaveNotice(Complete(r, (uint64_t{1} << 63) - 1)));
  EXPECT_EQ(s.current_wave(), 0u);
  proto::WaveNotice start;
  start.set_data_parallel_rank(1);
  start.set_start_wave((uint64_t{1} << 63) + 5);
  EXPECT_FALSE(s.OnWaveNotice(start));
  EXPECT_EQ(s.current_wave(), 0u);
  EXPECT_FALSE(s.engines_running());
  s.OnRankDown(1);
  EXPECT_TRUE(s.OnEngineLoad(Load(1, 0, 0, 0)));  // re-admitted: no overflow
  auto wave = s.OnFirstRequest(First(0, 0));
  ASSERT_TRUE(wave);
  EXPECT_EQ(wave->wave, 0);
}

}  // namespace
}  // namespace llmserve::coordinator
