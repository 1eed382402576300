#include "deploy/exit_policy.h"

namespace llmserve::deploy {

ExitAction DecideExit(const ChildId& id, const common::ChildExit& exit, const ExitContext& context) {
  if (context.expected_by_scaler) return ExitAction::kScaledDown;
  const bool engine = id.role == ChildRole::kEngine;
  if (context.headless && engine && exit.signal == 0 && exit.exit_code == 0) return ExitAction::kLeft;
  if (context.restart_policy == RestartPolicy::kOnFailure && id.role != ChildRole::kCoordinator)
    return ExitAction::kRestart;
  return ExitAction::kStop;
}

}  // namespace llmserve::deploy
