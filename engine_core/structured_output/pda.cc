#include "engine_core/structured_output/pda.h"

#include <algorithm>

namespace llmserve::engine_core::structured_output {

int32_t StackPool::Intern(int32_t node, int32_t parent, int32_t count) {
  auto [it, fresh] = index_.emplace(Frame{node, parent, count}, static_cast<int32_t>(frames_.size()));
  if (fresh) {
    frames_.push_back({node, parent, count});
    stamps_.push_back(0);
  }
  return it->second;
}

void StackPool::Truncate(size_t mark) {
  while (frames_.size() > mark) {
    index_.erase(frames_.back());
    frames_.pop_back();
    stamps_.pop_back();
  }
}

uint32_t StackPool::NewStamp() {
  if (++stamp_ == 0) {
    std::fill(stamps_.begin(), stamps_.end(), 0);
    stamp_ = 1;
  }
  return stamp_;
}

bool StackPool::Visit(int32_t id, uint32_t stamp) {
  if (stamps_[id] == stamp) return false;
  stamps_[id] = stamp;
  return true;
}

void Pda::Closure(const std::vector<int32_t>& seeds, StackSet* out) {
  out->stacks.clear();
  out->popped = false;
  uint32_t stamp = pool_->NewStamp();
  work_.assign(seeds.begin(), seeds.end());
  const std::vector<Node>& nodes = g_->nodes();
  const std::vector<Rule>& rules = g_->rules();
  while (!work_.empty()) {
    int32_t s = work_.back();
    work_.pop_back();
    if (!pool_->Visit(s, stamp)) continue;
    const Node& n = nodes[pool_->node(s)];
    if (!n.bytes.empty()) out->stacks.push_back(s);
    int32_t parent = pool_->parent(s);
    for (const CallEdge& c : n.calls) {
      int32_t ret = pool_->Intern(c.ret, parent, pool_->count(s));
      work_.push_back(pool_->Intern(rules[c.rule].start, ret));
    }
    if (n.accepting) {
      if (parent == kNoFrame) out->popped = true;
      else work_.push_back(parent);
    }
  }
  std::sort(out->stacks.begin(), out->stacks.end());
}

int32_t Pda::Take(int32_t s, const ByteEdge& e, const Node& n) {
  int32_t count = pool_->count(s);
  if (e.op != CountOp::kNone && count != kUnknownCount) {
    const Rule& r = g_->rules()[n.rule];
    if (e.op == CountOp::kStart) {
      if (count >= r.count_max) return kNoFrame;
      ++count;
    } else {
      if (count < r.count_min) return kNoFrame;
    }
  }
  if (e.op == CountOp::kExit) count = 0;  // the tail counts nothing
  return pool_->Intern(e.target, pool_->parent(s), count);
}

void Pda::Step(const StackSet& in, uint8_t byte, StackSet* out) {
  seeds_.clear();
  const std::vector<Node>& nodes = g_->nodes();
  for (int32_t s : in.stacks) {
    const Node& n = nodes[pool_->node(s)];
    for (const ByteEdge& b : n.bytes) {
      if (!b.set.Has(byte)) continue;
      int32_t next = b.op == CountOp::kNone ? pool_->Intern(b.target, pool_->parent(s), pool_->count(s))
                                            : Take(s, b, n);
      if (next != kNoFrame) seeds_.push_back(next);
    }
  }
  Closure(seeds_, out);
}

}  // namespace llmserve::engine_core::structured_output
