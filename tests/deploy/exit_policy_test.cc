// The launcher's rules for a child's exit, by role: scale-downs and a headless
// node's departing engines are no failure; --restart-policy on-failure starts
// engines and frontends again but never the coordinator; otherwise the
// deployment stops.
#include "deploy/exit_policy.h"

#include <gtest/gtest.h>

namespace llmserve::deploy {
namespace {

common::ChildExit Exited(int code) {
  common::ChildExit e;
  e.exit_code = code;
  return e;
}

common::ChildExit Killed(int signal) {
  common::ChildExit e;
  e.signal = signal;
  return e;
}

TEST(ExitPolicy, NeverRestartsAndStopsOnAnyFailure) {
  ExitContext never;
  EXPECT_EQ(DecideExit(ChildId::Engine(1), Killed(9), never), ExitAction::kStop);
  EXPECT_EQ(DecideExit(ChildId::Engine(0), Exited(0), never), ExitAction::kStop);  // the head's engines never leave
  EXPECT_EQ(DecideExit(ChildId::Frontend(0), Exited(1), never), ExitAction::kStop);
  EXPECT_EQ(DecideExit(ChildId::Coordinator(), Exited(1), never), ExitAction::kStop);
}

TEST(ExitPolicy, OnFailureRestartsEnginesAndFrontendsButNotTheCoordinator) {
  ExitContext on_failure;
  on_failure.restart_policy = RestartPolicy::kOnFailure;
  EXPECT_EQ(DecideExit(ChildId::Engine(1), Killed(9), on_failure), ExitAction::kRestart);
  EXPECT_EQ(DecideExit(ChildId::Frontend(1), Exited(1), on_failure), ExitAction::kRestart);
  EXPECT_EQ(DecideExit(ChildId::Coordinator(), Killed(9), on_failure), ExitAction::kStop);
}

TEST(ExitPolicy, ScaleDownsAreNoFailure) {
  ExitContext expected;
  expected.expected_by_scaler = true;
  EXPECT_EQ(DecideExit(ChildId::Engine(3), Killed(15), expected), ExitAction::kScaledDown);
}

TEST(ExitPolicy, AHeadlessEngineThatExitsCleanlyLeftTheDeployment) {
  for (RestartPolicy policy : {RestartPolicy::kNever, RestartPolicy::kOnFailure}) {
    ExitContext headless;
    headless.headless = true;
    headless.restart_policy = policy;
    EXPECT_EQ(DecideExit(ChildId::Engine(2), Exited(0), headless), ExitAction::kLeft);
    EXPECT_NE(DecideExit(ChildId::Engine(2), Exited(1), headless), ExitAction::kLeft);
    EXPECT_NE(DecideExit(ChildId::Engine(2), Killed(9), headless), ExitAction::kLeft);
  }
}

}  // namespace
}  // namespace llmserve::deploy
