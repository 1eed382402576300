#include "deploy/child_id.h"

namespace llmserve::deploy {

std::string ChildId::Name() const {
  switch (role) {
    case ChildRole::kCoordinator: return "coordinator";
    case ChildRole::kFrontend: return "frontend" + std::to_string(index);
    case ChildRole::kEngine: return "engine" + std::to_string(index);
  }
  return "child";
}

}  // namespace llmserve::deploy
