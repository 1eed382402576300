#pragma once
// SupervisedChildren: the launcher's children, each spawned under a typed
// ChildId (common::ChildProcesses underneath: children die with the
// launcher). Exits come back with the id they were spawned under.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/process/child_processes.h"
#include "deploy/child_id.h"
#include "base/status.h"

namespace llmserve::deploy {

// How a supervised child ended.
struct SupervisedExit {
  ChildId id;
  common::ChildExit exit;  // pid, exit code or signal; exit.name == id.Name()
};

class SupervisedChildren {
 public:
  SupervisedChildren() = default;
  SupervisedChildren(const SupervisedChildren&) = delete;
  SupervisedChildren& operator=(const SupervisedChildren&) = delete;

  // Starts `argv` as child `id`; an error if the exec fails or `id` already runs.
  Status Spawn(const ChildId& id, const std::vector<std::string>& argv);

  // Waits up to `timeout` for a child to exit and reaps it (at once when none runs).
  std::optional<SupervisedExit> WaitAny(std::chrono::milliseconds timeout);

  // Pid of child `id`, while it runs.
  std::optional<pid_t> PidOf(const ChildId& id) const;

  // Children still running.
  size_t running() const { return ids_.size(); }

  // SIGTERM to every child, SIGKILL after `grace`; reaps all and says how each ended.
  std::vector<SupervisedExit> TerminateAll(std::chrono::milliseconds grace);

 private:
  // The exit of a reaped child, with its id.
  SupervisedExit Identify(const common::ChildExit& exit);

  common::ChildProcesses processes_;
  std::map<pid_t, ChildId> ids_;  // running children
};

}  // namespace llmserve::deploy
