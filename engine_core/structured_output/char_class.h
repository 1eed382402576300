#pragma once
// Character classes over Unicode code points and their lowering to UTF-8
// byte automata (the class [a-zé] becomes "a-z, or C3 A9"), shared by the
// regex, EBNF and JSON Schema front ends.

#include <cstdint>
#include <utility>
#include <vector>

#include "engine_core/structured_output/expr.h"

namespace llmserve::engine_core::structured_output {

// Sorted, disjoint, non-adjacent inclusive code point ranges.
class CharClass {
 public:
  // Adds [lo, hi].
  void Add(uint32_t lo, uint32_t hi) { ranges_.push_back({lo, hi}); normalized_ = false; }
  // Adds every code point of `o`.
  void Add(const CharClass& o) {
    for (auto r : o.ranges()) Add(r.first, r.second);
  }
  // The code points not in this class (surrogates excluded).
  CharClass Negated() const;
  // The normalized ranges.
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const;
  // UTF-8 encodings of the members, as an alternation of byte sequences.
  Expr ToExpr() const;

  // \d, \w, \s and their negations as regex engines define them (ASCII \d
  // and \w; \s with the Unicode spaces JavaScript uses).
  static CharClass Digit();
  static CharClass Word();
  static CharClass Space();
  // Every code point.
  static CharClass Any();

 private:
  void Normalize() const;
  mutable std::vector<std::pair<uint32_t, uint32_t>> ranges_;
  mutable bool normalized_ = true;
};

}  // namespace llmserve::engine_core::structured_output
