// What an engine reports to the DP coordinator: loads when they change, and
// the engine side of the wave protocol.
#include <gtest/gtest.h>

#include "engine_core/coordinator_reporter.h"

namespace llmserve::engine_core {
namespace {

proto::SchedulerStats Stats(int32_t waiting, int32_t running, int64_t tokens, int64_t step) {
  proto::SchedulerStats s;
  s.num_waiting_reqs = waiting;
  s.num_running_reqs = running;
  s.num_waiting_tokens = tokens;
  s.step_counter = step;
  return s;
}

TEST(CoordinatorReporterTest, ReportsLoadOnlyWhenItChanges) {
  CoordinatorReporter r(3);
  auto reports = r.Update(Stats(0, 0, 0, 0), false);
  ASSERT_EQ(reports.size(), 1u);  // the first load always goes out
  EXPECT_EQ(reports[0].load().data_parallel_rank(), 3u);
  EXPECT_TRUE(r.Update(Stats(0, 0, 0, 0), false).empty());
  reports = r.Update(Stats(2, 1, 300, 7), true);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].load().num_waiting_reqs(), 2u);
  EXPECT_EQ(reports[0].load().num_running_reqs(), 1u);
  EXPECT_EQ(reports[0].load().num_waiting_tokens(), 300u);
  EXPECT_EQ(reports[0].load().step_counter(), 7u);
  EXPECT_TRUE(r.Update(Stats(2, 1, 300, 8), true).empty());  // only the step moved
}

TEST(CoordinatorReporterTest, GoingIdleCompletesTheWave) {
  CoordinatorReporter r(0);
  (void)r.Update(Stats(0, 0, 0, 0), false);
  EXPECT_FALSE(r.OnRequest(0));
  EXPECT_TRUE(r.running());
  EXPECT_TRUE(r.Update(Stats(1, 0, 10, 0), true).size() == 1);
  auto reports = r.Update(Stats(0, 0, 0, 5), false);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].has_load());
  ASSERT_TRUE(reports[1].has_wave());
  EXPECT_EQ(reports[1].wave().wave_complete(), 0u);
  EXPECT_EQ(r.current_wave(), 1);
  EXPECT_FALSE(r.running());
  EXPECT_TRUE(r.Update(Stats(0, 0, 0, 5), false).empty());  // reported once
}

TEST(CoordinatorReporterTest, StartWaveFromTheCoordinatorAndStaleRequests) {
  CoordinatorReporter r(1);
  // START_DP_WAVE excluding this rank changes nothing; otherwise it runs the wave.
  r.OnStartWave({0, 1});
  EXPECT_FALSE(r.running());
  r.OnStartWave({2, 0});
  EXPECT_TRUE(r.running());
  EXPECT_EQ(r.current_wave(), 2);
  auto reports = r.Update(Stats(0, 0, 0, 0), false);  // nothing to do: completes at once
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].wave().wave_complete(), 2u);
  r.OnStartWave({2, -1});  // an old wave: ignored
  EXPECT_FALSE(r.running());
  // A request stamped with the completed wave 2 while idle in wave 3: start_wave.
  auto start = r.OnRequest(2);
  ASSERT_TRUE(start);
  EXPECT_EQ(start->wave().start_wave(), 3u);
  EXPECT_EQ(start->wave().data_parallel_rank(), 1u);
  // A request from a newer wave is adopted silently.
  EXPECT_FALSE(r.OnRequest(9));
  EXPECT_EQ(r.current_wave(), 9);
}

}  // namespace
}  // namespace llmserve::engine_core
