#pragma once
// Internal to GrammarBuilder: lowering of expanded rule bodies to automata
// (Thompson construction, epsilon removal) and the checks on the result.

#include <string>
#include <vector>

#include "base/status.h"
#include "engine_core/structured_output/grammar.h"

namespace llmserve::engine_core::structured_output {

struct GrammarLowering {
  // Fills g's rules and nodes from `bodies` (references index `bodies`).
  static Status Lower(const std::vector<Expr>& bodies, const std::vector<std::string>& names,
                      int64_t max_nodes, Grammar* g);
  // Removes rules that derive no string and nodes that cannot reach the end
  // of their rule; errors when the root derives nothing or on left recursion.
  static Status PruneAndCheck(Grammar* g);
};

}  // namespace llmserve::engine_core::structured_output
