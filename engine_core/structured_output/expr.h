#pragma once
// Expr: the tree form of a grammar rule body, what every front end (JSON
// Schema, regex, EBNF, choice) produces. A rule body is built from byte sets,
// sequences, choices, references to other rules and bounded or unbounded
// repetition; GrammarBuilder lowers it to the automaton form (grammar.h).

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine_core/structured_output/byte_set.h"

namespace llmserve::engine_core::structured_output {

enum class ExprKind : uint8_t { kEmpty, kBytes, kSeq, kAlt, kRef, kRepeat, kCounted };

struct Expr {
  ExprKind kind = ExprKind::kEmpty;
  ByteSet bytes;             // kBytes: one byte from this set
  int32_t rule = -1;         // kRef: the referenced rule id
  int32_t min = 0;           // kRepeat, kCounted: at least min copies of items[0]
  int32_t max = -1;          // kRepeat, kCounted: at most max copies, -1 = unbounded
  std::vector<Expr> items;   // kSeq / kAlt operands, kRepeat's single operand,
                             // kCounted's item and tail
};

// The empty string.
inline Expr EmptyExpr() { return Expr{}; }
// One byte from `set`.
inline Expr BytesExpr(ByteSet set) {
  Expr e;
  e.kind = ExprKind::kBytes;
  e.bytes = set;
  return e;
}
// The concatenation of `items`.
Expr SeqExpr(std::vector<Expr> items);
// One of `items` (no item: the empty language is not expressible; callers
// never pass none).
Expr AltExpr(std::vector<Expr> items);
// The exact bytes of `s`.
Expr LiteralExpr(std::string_view s);
// A reference to rule `rule`.
inline Expr RefExpr(int32_t rule) {
  Expr e;
  e.kind = ExprKind::kRef;
  e.rule = rule;
  return e;
}
// min..max copies of `e` (max -1 = unbounded).
Expr RepeatExpr(Expr e, int32_t min, int32_t max);
// Zero or one copy of `e`.
inline Expr OptExpr(Expr e) { return RepeatExpr(std::move(e), 0, 1); }
// Zero or more copies of `e`.
inline Expr StarExpr(Expr e) { return RepeatExpr(std::move(e), 0, -1); }
// min..max copies of `item` then `tail`, lowered as one loop whose copies
// are counted at match time (the count is part of the matcher's state), not
// unrolled. Only as the whole body of a rule (GrammarBuilder::DefineCounted);
// item and tail call no rule and match no empty string, and item must not
// return to its first byte once started (one JSON string character).
Expr CountedExpr(Expr item, int32_t min, int32_t max, Expr tail);
// Number of Expr nodes in the tree (a size measure for inlining limits).
int64_t ExprSize(const Expr& e);

}  // namespace llmserve::engine_core::structured_output
