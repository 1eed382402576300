#include "engine_core/structured_output/pda.h"

#include <algorithm>

namespace llmserve::engine_core::structured_output {

int32_t StackPool::Intern(int32_t node, int32_t parent) {
  auto [it, fresh] = index_.emplace(Key(node, parent), static_cast<int32_t>(frames_.size()));
  if (fresh) {
    frames_.push_back({node, parent});
    stamps_.push_back(0);
  }
  return it->second;
}

void StackPool::Truncate(size_t mark) {
  while (frames_.size() > mark) {
    index_.erase(Key(frames_.back().node, frames_.back().parent));
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
      int32_t ret = pool_->Intern(c.ret, parent);
      work_.push_back(pool_->Intern(rules[c.rule].start, ret));
    }
    if (n.accepting) {
      if (parent == kNoFrame) out->popped = true;
      else work_.push_back(parent);
    }
  }
  std::sort(out->stacks.begin(), out->stacks.end());
}

void Pda::Step(const StackSet& in, uint8_t byte, StackSet* out) {
  seeds_.clear();
  const std::vector<Node>& nodes = g_->nodes();
  for (int32_t s : in.stacks) {
    const Node& n = nodes[pool_->node(s)];
    for (const ByteEdge& b : n.bytes) {
      if (b.set.Has(byte)) seeds_.push_back(pool_->Intern(b.target, pool_->parent(s)));
    }
  }
  Closure(seeds_, out);
}

}  // namespace llmserve::engine_core::structured_output
