#pragma once
// GrammarMatcher: the per-request state of a compiled grammar. It consumes
// tokens (or raw bytes), says whether the grammar can end, fills the
// allowed-token bitmask for the next step, and keeps a history so that the
// last n accepted steps can be rolled back (preemption, recompute,
// speculative decoding). Clone copies the state for n > 1.
//
// Bitmask layout (vLLM / xgrammar): ceil(vocab / 32) int32 words, bit
// (id & 31) of word (id >> 5) set = token allowed. EOS is allowed exactly
// when the grammar can end; after EOS the matcher is terminated.
//
// Not thread-safe; one matcher per request.

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "engine_core/structured_output/compiled_grammar.h"
#include "engine_core/structured_output/pda.h"

namespace llmserve::engine_core::structured_output {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Consumes token `id` as one step; false (state unchanged) when the
  // grammar does not allow it.
  bool AcceptToken(int32_t id);
  // Consumes raw bytes as one step; false (state unchanged) when not allowed.
  bool AcceptBytes(std::string_view bytes);
  // True when the bytes so far form a complete match.
  bool CanEnd() const { return !terminated() && history_.back().set.popped; }
  // True after an EOS token was accepted.
  bool IsTerminated() const { return terminated(); }
  // Undoes the last `n` accepted steps (at most NumSteps()).
  void Rollback(int n);
  // Steps accepted so far (and not rolled back).
  int NumSteps() const { return static_cast<int>(history_.size()) - 1; }
  // Fills `mask` (vocab().mask_words() words) with the tokens allowed next.
  void FillNextTokenBitmask(int32_t* mask);
  // An independent copy of this matcher.
  std::unique_ptr<GrammarMatcher> Clone() const { return std::make_unique<GrammarMatcher>(*this); }
  // The compiled grammar.
  const CompiledGrammar& compiled() const { return *grammar_; }

  GrammarMatcher(const GrammarMatcher& other);

 private:
  struct State {
    StackSet set;
    bool terminated = false;
  };
  bool terminated() const { return history_.back().terminated; }
  bool Advance(std::string_view bytes, StackSet* out);
  void OrPosition(int32_t stack, uint32_t* mask);
  void CheckUncertain(int32_t stack, const PositionMask& pm, uint32_t* mask);
  std::vector<int32_t> AcceptedUncertain(int32_t parent, const PositionMask& pm);
  // A counted frame's room (copies it may still start) and need (copies it
  // must start before it leaves).
  std::pair<int32_t, int32_t> RoomAndNeed(int32_t stack) const;

  std::shared_ptr<const CompiledGrammar> grammar_;
  StackPool pool_;
  Pda pda_;
  std::vector<State> history_;
  std::vector<StackSet> levels_;  // scratch for mask computation
  std::vector<int32_t> nodes_;    // scratch: a stack's nodes, the UncertainCache key
  std::vector<uint32_t> scratch_; // scratch for counted masks
};

}  // namespace llmserve::engine_core::structured_output
