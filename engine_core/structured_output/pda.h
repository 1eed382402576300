#pragma once
// The pushdown automaton over a Grammar: stacks of nodes kept in a pool of
// interned frames (a frame is a node, a count and the id of the frame below
// it, so a stack is the id of its top frame and equal stacks have equal ids;
// the count is the item copies a counted rule's frame has started), and the
// two operations a matcher needs: closure (expand calls and rule ends until
// every stack's top can consume a byte) and step (consume one byte).
//
// A stack whose bottom frame ends pops to "below the bottom": for a matcher
// that is the end of the grammar; for a mask precomputation, whose bottom
// frame is a position with an unknown context, it is a pop into that context.
// Such a bottom frame also has an unknown count (kUnknownCount): its count
// operations are not checked, so its masks hold for every count.

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "engine_core/structured_output/grammar.h"

namespace llmserve::engine_core::structured_output {

inline constexpr int32_t kNoFrame = -1;
inline constexpr int32_t kUnknownCount = -1;

class StackPool {
 public:
  // The id of the frame (node, parent, count), made when new.
  int32_t Intern(int32_t node, int32_t parent, int32_t count = 0);
  // The node of frame `id`.
  int32_t node(int32_t id) const { return frames_[id].node; }
  // The count of frame `id` (0 outside counted rules).
  int32_t count(int32_t id) const { return frames_[id].count; }
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
    int32_t count;
    bool operator==(const Frame& o) const { return node == o.node && parent == o.parent && count == o.count; }
  };
  struct FrameHash {
    size_t operator()(const Frame& f) const {
      uint64_t k = (static_cast<uint64_t>(static_cast<uint32_t>(f.node)) << 32) | static_cast<uint32_t>(f.parent);
      return std::hash<uint64_t>()(k ^ (static_cast<uint64_t>(static_cast<uint32_t>(f.count)) * 0x9E3779B97F4A7C15ull));
    }
  };
  std::vector<Frame> frames_;
  std::vector<uint32_t> stamps_;
  std::unordered_map<Frame, int32_t, FrameHash> index_;
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
  // The frame after edge `e` from frame `s` (node `n`), or kNoFrame when its
  // count operation is not allowed.
  int32_t Take(int32_t s, const ByteEdge& e, const Node& n);

  const Grammar* g_;
  StackPool* pool_;
  std::vector<int32_t> work_;
  std::vector<int32_t> seeds_;
};

}  // namespace llmserve::engine_core::structured_output
