#pragma once
// PositionMask: the tokens a grammar position accepts whatever lies below it
// on the stack, computed once per position (adaptive token masks, as
// xgrammar publishes the idea; this is our own construction).
//
// A position is a node at the top of a stack. Walking the vocabulary trie
// with a stack whose bottom frame is that node and whose context is unknown
// sorts every token into one of three classes:
//   accepted   - some path consumes all of its bytes without leaving the
//                rule of the position (nor any rule it calls): accepted in
//                every context;
//   uncertain  - the rule of the position ends after `offset` bytes with
//                bytes left over: acceptance depends on the frames below,
//                checked at mask time from that offset;
//   rejected   - everything else.
// Positions of leaf rules (rules that call no rule) depend only on the shape
// of the rule, so their masks are cached per vocabulary across grammars.
// Positions of counted rules are walked with the count of the bottom frame
// unknown (unchecked); `counted` records what each token does to the count,
// and the mask of a frame is filtered by its count at mask time.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine_core/structured_output/counted_tokens.h"
#include "engine_core/structured_output/grammar.h"
#include "engine_core/structured_output/pda.h"
#include "engine_core/structured_output/vocabulary.h"

namespace llmserve::engine_core::structured_output {

struct PositionMask {
  struct Uncertain {
    int32_t token;
    int32_t begin;   // its remainder (the bytes left when the rule ended) in `remainders`
    int32_t size;
    int32_t lcp;     // common prefix of this remainder with the previous one
    int32_t starts;  // counted rules: item copies started before the rule ended
  };
  // Counted rules: only the tokens that stay in the loop (see `counted`).
  std::vector<uint32_t> accepted_bits;  // dense form (mask_words words), or empty
  std::vector<int32_t> accepted_ids;    // sparse form when accepted_bits is empty
  std::vector<Uncertain> uncertain;     // sorted by remainder bytes
  // The remainders, one after another: checking them reads this buffer in
  // order instead of ~1,000 token strings scattered over the heap.
  std::string remainders;
  // Positions of counted rules: the count-aware rest (null otherwise).
  std::shared_ptr<const CountedTokens> counted;

  std::string_view remainder(const Uncertain& u) const { return std::string_view(remainders).substr(u.begin, u.size); }

  // ORs the accepted tokens into `mask`.
  void OrInto(uint32_t* mask) const;
  // Counted rules: ORs the accepted tokens of a frame that may start `room`
  // more copies and must start `need` more before it leaves; `scratch` has
  // mask_words words.
  void OrCountedInto(uint32_t* mask, int32_t room, int32_t need, std::vector<uint32_t>* scratch) const;
  // Counted rules: whether an uncertain token fits the frame's count.
  static bool Fits(const Uncertain& u, int32_t room, int32_t need) { return u.starts <= room && u.starts >= need; }
  // The bytes this mask holds (for cache budgets).
  size_t bytes() const {
    return sizeof(*this) + accepted_bits.size() * sizeof(uint32_t) + accepted_ids.size() * sizeof(int32_t) +
           uncertain.size() * sizeof(Uncertain) + remainders.size() + (counted ? counted->bytes() : 0);
  }
};

// A lazily built DFA over the sets of stacks reachable from positions of one
// grammar, each stack with an unknown context below its bottom frame. One is
// shared by all positions of a grammar, so positions that reach the same
// stack sets (a bounded repetition's chain) share transitions.
class LocalDfa {
 public:
  static constexpr int32_t kDead = -1;
  explicit LocalDfa(const Grammar& g);
  // The state of a stack holding only `node`.
  int32_t Start(int32_t node);
  // The state after `byte` from `state`, or kDead.
  int32_t Next(int32_t state, uint8_t byte) {
    int32_t t = trans_[state][byte];
    return t != kUnknown ? t : Slow(state, byte);
  }
  // The grammar.
  const Grammar& grammar() const { return *g_; }
  // True when the bottom frame ended on the way to `state`.
  bool popped(int32_t state) const { return popped_[state]; }
  // The count operation the bottom frame (unknown count) took on `byte`
  // from `state` (after Next(state, byte) was called).
  CountOp op(int32_t state, uint8_t byte) const { return ops_[state][byte]; }
  // True when some step had bottom-frame edges with different count
  // operations (a counted item that is not deterministic: masks inexact).
  bool ambiguous() const { return ambiguous_; }

 private:
  static constexpr int32_t kUnknown = -2;
  int32_t Slow(int32_t state, uint8_t byte);
  void RecordOp(int32_t state, uint8_t byte);
  int32_t Add(StackSet set);

  const Grammar* g_;
  StackPool pool_;
  Pda pda_;
  std::vector<StackSet> sets_;
  std::vector<ByteSet> viable_;
  std::vector<bool> popped_;
  std::vector<std::array<int32_t, 256>> trans_;
  std::vector<std::array<CountOp, 256>> ops_;
  std::unordered_map<std::string, int32_t> ids_;
  bool ambiguous_ = false;
};

// Computes the mask of `node` (a node with byte edges) over `vocab`, with
// `dfa` built for the node's grammar.
std::shared_ptr<const PositionMask> ComputePositionMask(LocalDfa& dfa, int32_t node, const Vocabulary& vocab);

}  // namespace llmserve::engine_core::structured_output
