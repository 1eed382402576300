#pragma once
// What the launcher does when one of its children exits: the supervision
// rules of `llmserve serve`, as a pure decision on the child's role and how it
// ended, so they are tested without processes.
//
// - An engine the elastic scaler stopped (scale-down) is no failure.
// - On a headless node, an engine that exits 0 was removed by the head node
//   (elastic scale-down relayed as a drain): it left the deployment.
// - Otherwise the exit is a failure: with --restart-policy on-failure an
//   engine or a frontend is started again; the coordinator never is, and with
//   --restart-policy never any failure stops the deployment (exit 1).

#include "common/process/child_processes.h"
#include "deploy/child_id.h"
#include "deploy/serve_options.h"

namespace llmserve::deploy {

enum class ExitAction {
  kScaledDown,  // stopped on purpose by an elastic scale-down (head node)
  kLeft,        // a headless node's engine removed by the head: a normal departure
  kRestart,     // a failure; start the child again
  kStop,        // a failure; stop the deployment
};

struct ExitContext {
  bool expected_by_scaler = false;  // the elastic scaler stopped this engine
  bool headless = false;            // this node runs engines only
  RestartPolicy restart_policy = RestartPolicy::kNever;
};

// The action for child `id` ending as `exit`.
ExitAction DecideExit(const ChildId& id, const common::ChildExit& exit, const ExitContext& context);

}  // namespace llmserve::deploy
