#include "engine_core/step_overhead.h"

#include <gtest/gtest.h>

namespace llmserve::engine_core {
namespace {

using std::chrono::microseconds;

TEST(StepOverhead, MeanAndQuantilesOfTotalMinusExecute) {
  StepOverhead o;
  EXPECT_EQ(o.Summary(), "no steps");
  // Overheads 10, 20, ..., 1000 us over 100 steps of 256 requests.
  for (int i = 1; i <= 100; ++i) o.Add(microseconds(5000 + 10 * i), microseconds(5000), 256);
  EXPECT_EQ(o.steps(), 100u);
  EXPECT_DOUBLE_EQ(o.MeanOverheadMicros(), 505.0);
  EXPECT_DOUBLE_EQ(o.OverheadQuantileMicros(0.0), 10.0);
  EXPECT_DOUBLE_EQ(o.OverheadQuantileMicros(0.5), 500.0);
  EXPECT_DOUBLE_EQ(o.OverheadQuantileMicros(1.0), 1000.0);
  EXPECT_NE(o.Summary().find("100 steps (mean batch 256.0)"), std::string::npos) << o.Summary();
}

TEST(StepOverhead, ClampsNegativeAndHugeOverheads) {
  StepOverhead o;
  o.Add(microseconds(10), microseconds(20), 1);          // clock granularity: never below 0 in the histogram
  o.Add(std::chrono::seconds(2), microseconds(0), 1);    // beyond the last bucket
  EXPECT_DOUBLE_EQ(o.OverheadQuantileMicros(0.0), 0.0);
  EXPECT_DOUBLE_EQ(o.OverheadQuantileMicros(1.0), 19999.0);
}

TEST(StepOverhead, CpuOverheadMeanAndThreadClock) {
  StepOverhead o;
  o.Add(microseconds(100), microseconds(60), 4);
  o.AddCpu(microseconds(30));
  o.Add(microseconds(100), microseconds(60), 4);
  o.AddCpu(microseconds(50));
  EXPECT_DOUBLE_EQ(o.MeanCpuOverheadMicros(), 40.0);
  EXPECT_NE(o.Summary().find("its CPU time mean 40.0 us (p50 30, p90 30)"), std::string::npos) << o.Summary();
  const auto before = ThreadCpuTime();
  volatile double x = 0;
  for (int i = 0; i < 2000000; ++i) x = x + 1.0;
  EXPECT_GT(ThreadCpuTime(), before);
}

TEST(StepOverhead, CpuQuantilesSeparateRareHeavySteps) {
  StepOverhead o;
  EXPECT_DOUBLE_EQ(o.CpuQuantileMicros(0.5), 0.0);
  // Nine steady steps and one that admits a batch: the median stays steady.
  for (int i = 0; i < 9; ++i) o.AddCpu(microseconds(40 + i));
  o.AddCpu(microseconds(3000));
  EXPECT_DOUBLE_EQ(o.CpuQuantileMicros(0.0), 40.0);
  EXPECT_DOUBLE_EQ(o.CpuQuantileMicros(0.5), 44.0);
  EXPECT_DOUBLE_EQ(o.CpuQuantileMicros(1.0), 3000.0);
  EXPECT_NEAR(o.MeanCpuOverheadMicros(), (9 * 44.0 + 3000.0) / 10, 1e-9);
  o.AddCpu(microseconds(-5));  // clock granularity: counted in the first bucket
  EXPECT_DOUBLE_EQ(o.CpuQuantileMicros(0.0), 0.0);
}

}  // namespace
}  // namespace llmserve::engine_core
