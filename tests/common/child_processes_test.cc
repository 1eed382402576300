// Spawning, exit reporting, graceful termination and death-with-parent of the
// processes a deployment runs (real fork/exec of /bin/sh).
#include "common/process/child_processes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "tests/common/wait_until.h"

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
  // The shell ignores SIGTERM, says so on the pipe it inherited, and becomes a
  // `sleep` that keeps ignoring it (an ignored signal stays ignored over exec).
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const std::string script =
      "trap '' TERM; echo ready >&" + std::to_string(ready[1]) + "; exec sleep 30";
  ASSERT_TRUE(children.Spawn("ignores-sigterm", {"/bin/sh", "-c", script}).ok());
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the shell died before installing its trap";
  close(ready[0]);
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
  // The kernel delivers the death signal on its own schedule: /proc is the
  // only place to see it land.
  const bool gone = test_util::WaitUntil(
      [&] {
        std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
        std::string s;
        std::getline(stat, s);
        // Gone, or a zombie waiting for init to reap it.
        return s.empty() || s.find(") Z") != std::string::npos;
      },
      5s);
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " outlived its parent";
}

}  // namespace
}  // namespace llmserve::common
