#pragma once
// ChildProcesses: spawns and supervises the executables of a deployment.
// Children die with their parent (PR_SET_PDEATHSIG), so no exit path of the
// parent — a crash or SIGKILL included — leaves orphans behind; the parent
// terminates them gracefully (SIGTERM, then SIGKILL after a grace period) on
// an orderly exit.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::common {

// How a child ended.
struct ChildExit {
  std::string name;
  pid_t pid = 0;
  int exit_code = 0;   // valid when signal == 0
  int signal = 0;      // the signal that killed it, or 0
  // "exited with code 3" / "killed by signal 9 (Killed)".
  std::string Describe() const;
};

class ChildProcesses {
 public:
  ChildProcesses() = default;
  // Terminates every child still running (grace period 5 s).
  ~ChildProcesses();
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;

  // Starts `argv[0]` with `argv` (searched in PATH when it has no '/'), with
  // extra environment variables "K=V" added. The child gets SIGKILL when this
  // process dies. `name` labels it in logs and exits.
  StatusOr<pid_t> Spawn(const std::string& name, const std::vector<std::string>& argv,
                        const std::vector<std::string>& extra_env = {});

  // Waits up to `timeout` for any child to exit and reaps it.
  std::optional<ChildExit> WaitAny(std::chrono::milliseconds timeout);

  // Sends `signal` to every running child.
  void SignalAll(int signal);

  // SIGTERM to every child, waits up to `grace`, then SIGKILL; reaps all.
  // Returns how each ended.
  std::vector<ChildExit> TerminateAll(std::chrono::milliseconds grace);

  // Children still running.
  size_t running() const { return children_.size(); }
  // Pid of the named child, if it runs.
  std::optional<pid_t> PidOf(const std::string& name) const;

 private:
  struct Child {
    std::string name;
    pid_t pid;
  };
  std::optional<ChildExit> Reap(bool block);

  std::vector<Child> children_;
};

// The directory holding the running executable (to find sibling executables).
std::string ExecutableDirectory();

}  // namespace llmserve::common
