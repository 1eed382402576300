#pragma once
// The grammar IR in automaton form: a context-free grammar over bytes where
// every rule is a nondeterministic automaton whose edges either consume one
// byte from a ByteSet or call another rule and continue at a return node.
// A matcher runs it as a pushdown automaton (pda.h): a stack of nodes whose
// top is the current position and whose lower frames are return positions.
//
// GrammarBuilder lowers Expr rule bodies to this form: references to
// non-recursive rules are inlined (so that a position sees the bytes that
// follow it, which keeps token masks context-independent), rules marked
// shared stay separate (they are cached across grammars), epsilon edges are
// removed, rules that derive no string are pruned, nodes that cannot reach
// the end of their rule are trimmed, and left recursion is an error.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "engine_core/structured_output/expr.h"

namespace llmserve::engine_core::structured_output {

// What a byte edge does to the count of a counted rule (CountedExpr).
enum class CountOp : uint8_t {
  kNone,
  kStart,  // starts a copy of the item: allowed while count < the rule's max; count + 1
  kExit,   // leaves the loop for the tail: allowed once count >= the rule's min
};

struct ByteEdge {
  ByteSet set;
  int32_t target = -1;  // node id
  CountOp op = CountOp::kNone;
};

struct CallEdge {
  int32_t rule = -1;  // callee rule id
  int32_t ret = -1;   // node to continue at (same rule as the caller) after it
};

struct Node {
  int32_t rule = -1;
  bool accepting = false;  // the rule may end here
  std::vector<ByteEdge> bytes;
  std::vector<CallEdge> calls;
};

struct Rule {
  std::string name;
  int32_t start = -1;  // node id
  bool leaf = false;   // calls no rule (its positions can be cached by shape)
  // A counted rule (body a CountedExpr): its frames count the item copies
  // started, within [count_min, count_max]. count_max < 0: not counted.
  int32_t count_min = 0;
  int32_t count_max = -1;
  bool counted() const { return count_max >= 0; }
};

struct GrammarLowering;

class Grammar {
 public:
  // All nodes; ids index this vector.
  const std::vector<Node>& nodes() const { return nodes_; }
  // All rules; ids index this vector.
  const std::vector<Rule>& rules() const { return rules_; }
  // The rule a match starts in and must complete.
  int32_t root() const { return root_; }
  // A canonical text of rule `rule` (its automaton from its start), equal for
  // two rules exactly when they accept the same byte paths the same way.
  // A counted rule's bounds are left out: its position masks do not depend
  // on them (they are applied at mask time).
  std::string LeafShape(int32_t rule) const;
  // A human-readable dump for tests and debugging.
  std::string ToString() const;

 private:
  friend class GrammarBuilder;
  friend struct GrammarLowering;
  std::vector<Node> nodes_;
  std::vector<Rule> rules_;
  int32_t root_ = -1;
};

struct BuildOptions {
  int64_t max_inline_size = 4096;  // inline a non-recursive rule up to this Expr size
  int64_t max_nodes = 100000;      // automaton size limit (InvalidArgument beyond)
};

class GrammarBuilder {
 public:
  // Declares a rule and returns its id; names need not be unique.
  int32_t AddRule(std::string name);
  // Sets the body of `rule`.
  void Define(int32_t rule, Expr body);
  // Sets the body of `rule` to min..max counted copies of `item` then `tail`
  // (CountedExpr); the rule stays separate and is shared like MarkShared's.
  void DefineCounted(int32_t rule, Expr item, int32_t min, int32_t max, Expr tail);
  // Keeps `rule` a separate rule (not inlined) so its positions are cached
  // across grammars; only honoured for rules that call no other rule.
  void MarkShared(int32_t rule) { shared_.at(rule) = true; }
  // The id of the first rule named `name`.
  std::optional<int32_t> Find(const std::string& name) const;
  // Number of declared rules.
  int32_t size() const { return static_cast<int32_t>(bodies_.size()); }
  // Lowers the rules reachable from `root`. Errors: an undefined rule, left
  // recursion, a grammar that accepts nothing, an automaton over max_nodes.
  StatusOr<std::shared_ptr<const Grammar>> Build(int32_t root, const BuildOptions& options = {}) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::optional<Expr>> bodies_;
  std::vector<bool> shared_;
};

}  // namespace llmserve::engine_core::structured_output
