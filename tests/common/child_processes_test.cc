// Spawning, exit reporting, graceful termination and death-with-parent of the
// processes a deployment runs (real fork/exec of /bin/sh).
#include "common/process/child_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace llmserve::common {
namespace {

using namespace std::chrono_literals;

TEST(ChildProcesses, ReportsExitCodesAndSignals) {
  ChildProcesses children;
  ASSERT_TRUE(children.Spawn("three", {"/bin/sh", "-c", "exit 3"}).ok());
  auto exit = children.WaitAny(5s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->name, "three");
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_EQ(exit->Describe(), "exited with code 3");
  auto pid = children.Spawn("sleeper", {"sleep", "30"});
  ASSERT_TRUE(pid.ok());
  kill(*pid, SIGKILL);
  exit = children.WaitAny(5s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(children.running(), 0u);
}

TEST(ChildProcesses, EnvironmentIsPassed) {
  ChildProcesses children;
  ASSERT_TRUE(children.Spawn("env", {"/bin/sh", "-c", "test \"$LLMSERVE_X\" = 42"}, {"LLMSERVE_X=42"}).ok());
  auto exit = children.WaitAny(5s);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
}

TEST(ChildProcesses, TerminateAllUsesSigtermThenSigkill) {
  ChildProcesses children;
  ASSERT_TRUE(children.Spawn("polite", {"sleep", "30"}).ok());
  ASSERT_TRUE(children.Spawn("ignores-sigterm", {"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"}).ok());
  std::this_thread::sleep_for(200ms);  // let the trap install
  auto exits = children.TerminateAll(500ms);
  ASSERT_EQ(exits.size(), 2u);
  for (const auto& e : exits) {
    EXPECT_EQ(e.signal, e.name == "polite" ? SIGTERM : SIGKILL) << e.name;
  }
}

TEST(ChildProcesses, ChildrenDieWithTheirParent) {
  // A middle process spawns a grandchild and is then SIGKILLed: the grandchild
  // must not survive as an orphan.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    ChildProcesses children;
    auto pid = children.Spawn("grandchild", {"sleep", "30"});
    pid_t p = pid.ok() ? *pid : -1;
    (void)!write(fds[1], &p, sizeof(p));
    pause();
    _exit(0);
  }
  pid_t grandchild = -1;
  ASSERT_EQ(read(fds[0], &grandchild, sizeof(grandchild)), static_cast<ssize_t>(sizeof(grandchild)));
  ASSERT_GT(grandchild, 0);
  kill(middle, SIGKILL);
  waitpid(middle, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string s;
    std::getline(stat, s);
    // Gone, or a zombie waiting for init to reap it.
    gone = s.empty() || s.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " outlived its parent";
}

}  // namespace
}  // namespace llmserve::common
