#include "worker/core_share.h"

#include <gtest/gtest.h>
#include <sched.h>

namespace llmserve::worker {
namespace {

TEST(CoreShare, SplitsTheUsableCoresEquallyAndNeverGivesZero) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  const size_t usable = static_cast<size_t>(CPU_COUNT(&all));
  EXPECT_EQ(CoreShare(1), usable);
  EXPECT_EQ(CoreShare(0), usable);
  EXPECT_EQ(CoreShare(2), usable / 2 > 0 ? usable / 2 : 1);
  EXPECT_EQ(CoreShare(100000), 1u);
  // Restricted to one core (as `taskset -c` would), every process gets one thread.
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(CoreShare(1), 1u);
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
}

}  // namespace
}  // namespace llmserve::worker
