#include "deploy/supervised_children.h"

#include <glog/logging.h>

namespace llmserve::deploy {

Status SupervisedChildren::Spawn(const ChildId& id, const std::vector<std::string>& argv) {
  if (PidOf(id)) return Status::Internal("cannot start " + id.Name() + ": it is already running");
  auto pid = processes_.Spawn(id.Name(), argv);
  if (!pid.ok()) return pid.status();
  ids_[*pid] = id;
  return Status::Ok();
}

SupervisedExit SupervisedChildren::Identify(const common::ChildExit& exit) {
  auto it = ids_.find(exit.pid);
  CHECK(it != ids_.end()) << "reaped " << exit.name << " (pid " << exit.pid << "), which was not spawned here";
  SupervisedExit e{it->second, exit};
  ids_.erase(it);
  return e;
}

std::optional<SupervisedExit> SupervisedChildren::WaitAny(std::chrono::milliseconds timeout) {
  auto exit = processes_.WaitAny(timeout);
  if (!exit) return std::nullopt;
  return Identify(*exit);
}

std::optional<pid_t> SupervisedChildren::PidOf(const ChildId& id) const {
  for (const auto& [pid, child] : ids_)
    if (child == id) return pid;
  return std::nullopt;
}

std::vector<SupervisedExit> SupervisedChildren::TerminateAll(std::chrono::milliseconds grace) {
  std::vector<SupervisedExit> exits;
  for (const common::ChildExit& exit : processes_.TerminateAll(grace)) exits.push_back(Identify(exit));
  return exits;
}

}  // namespace llmserve::deploy
