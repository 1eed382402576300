#pragma once
// The pushdown automaton over a Grammar: stacks of nodes kept in a pool of
// interned frames (a frame is a node and the id of the frame below it, so a
// stack is the id of its top frame and equal stacks have equal ids), and the
// two operations a matcher needs: closure (expand calls and rule ends until
// every stack's top can consume a byte) and step (consume one byte).
//
// A stack whose bottom frame ends pops to "below the bottom": for a matcher
// that is the end of the grammar; for a mask precomputation, whose bottom
// frame is a position with an unknown context, it is a pop into that context.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine_core/structured_output/grammar.h"

namespace llmserve::engine_core::structured_output {

inline constexpr int32_t kNoFrame = -1;

class StackPool {
 public:
  // The id of the frame (node, parent), made when new.
  int32_t Intern(int32_t node, int32_t parent);
  // The node of frame `id`.
  int32_t node(int32_t id) const { return frames_[id].node; }
  // The frame below `id` (kNoFrame at the bottom).
  int32_t parent(int32_t id) const { return frames_[id].parent; }
  // Number of frames.
  size_t size() const { return frames_.size(); }
  // Forgets frames made after size() was `mark`.
  void Truncate(size_t mark);
  // A fresh visit stamp for closure bookkeeping.
  uint32_t NewStamp();
  // Marks frame `id` with `stamp`; false when it already had it.
  bool Visit(int32_t id, uint32_t stamp);

 private:
  struct Frame {
    int32_t node;
    int32_t parent;
  };
  static uint64_t Key(int32_t node, int32_t parent) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) | static_cast<uint32_t>(parent);
  }
  std::vector<Frame> frames_;
  std::vector<uint32_t> stamps_;
  std::unordered_map<uint64_t, int32_t> index_;
  uint32_t stamp_ = 0;
};

// Stacks whose tops can consume a byte, and whether a stack popped below its
// bottom frame on the way.
struct StackSet {
  std::vector<int32_t> stacks;  // sorted, unique
  bool popped = false;
  bool Dead() const { return stacks.empty() && !popped; }
  bool operator==(const StackSet& o) const { return popped == o.popped && stacks == o.stacks; }
};

class Pda {
 public:
  Pda(const Grammar* grammar, StackPool* pool) : g_(grammar), pool_(pool) {}
  // Replaces `out` with the closure of `seeds`.
  void Closure(const std::vector<int32_t>& seeds, StackSet* out);
  // Replaces `out` with the closure after consuming `byte` from `in`.
  void Step(const StackSet& in, uint8_t byte, StackSet* out);

 private:
  const Grammar* g_;
  StackPool* pool_;
  std::vector<int32_t> work_;
  std::vector<int32_t> seeds_;
};

}  // namespace llmserve::engine_core::structured_output
