#pragma once
// ChildId: which process of a deployment a child of the launcher is — the DP
// coordinator, API server (frontend) i, or the engine of DP rank r — typed,
// so supervision decides by role and rank instead of parsing process names.
// Name() is the label in the launcher's log lines ("engine3 left the
// deployment"), which tests and operators read.

#include <compare>
#include <cstdint>
#include <string>

namespace llmserve::deploy {

enum class ChildRole { kCoordinator, kFrontend, kEngine };

struct ChildId {
  ChildRole role = ChildRole::kEngine;
  uint32_t index = 0;  // the frontend's index or the engine's DP rank; 0 for the coordinator

  // The coordinator (one per deployment, on the head node).
  static ChildId Coordinator() { return {ChildRole::kCoordinator, 0}; }
  // API server `index` (0 .. --api-server-count - 1).
  static ChildId Frontend(uint32_t index) { return {ChildRole::kFrontend, index}; }
  // The engine core of DP rank `rank`.
  static ChildId Engine(uint32_t rank) { return {ChildRole::kEngine, rank}; }

  // "coordinator", "frontend<index>" or "engine<rank>".
  std::string Name() const;

  auto operator<=>(const ChildId&) const = default;
};

}  // namespace llmserve::deploy
