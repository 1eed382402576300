#include "engine_core/structured_output/matcher.h"

#include <algorithm>
#include <cstring>

namespace llmserve::engine_core::structured_output {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)), pda_(&grammar_->grammar(), &pool_) {
  const Grammar& g = grammar_->grammar();
  State init;
  pda_.Closure({pool_.Intern(g.rules()[g.root()].start, kNoFrame)}, &init.set);
  history_.push_back(std::move(init));
}

GrammarMatcher::GrammarMatcher(const GrammarMatcher& other)
    : grammar_(other.grammar_),
      pool_(other.pool_),
      pda_(&grammar_->grammar(), &pool_),
      history_(other.history_) {}

bool GrammarMatcher::Advance(std::string_view bytes, StackSet* out) {
  *out = history_.back().set;
  StackSet next;
  for (char c : bytes) {
    if (out->stacks.empty()) return false;
    pda_.Step(*out, static_cast<uint8_t>(c), &next);
    std::swap(*out, next);
  }
  return !out->Dead();
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  if (terminated()) return false;
  size_t mark = pool_.size();
  State s;
  if (!Advance(bytes, &s.set)) {
    pool_.Truncate(mark);
    return false;
  }
  history_.push_back(std::move(s));
  return true;
}

bool GrammarMatcher::AcceptToken(int32_t id) {
  const Vocabulary& v = grammar_->vocab();
  if (id < 0 || id >= v.size() || terminated()) return false;
  if (v.IsEos(id)) {
    if (!CanEnd()) return false;
    State s;
    s.terminated = true;
    history_.push_back(std::move(s));
    return true;
  }
  if (v.bytes(id).empty()) return false;
  return AcceptBytes(v.bytes(id));
}

void GrammarMatcher::Rollback(int n) {
  n = std::clamp(n, 0, NumSteps());
  history_.resize(history_.size() - n);
}

std::pair<int32_t, int32_t> GrammarMatcher::RoomAndNeed(int32_t stack) const {
  const Rule& r = grammar_->grammar().rules()[grammar_->grammar().nodes()[pool_.node(stack)].rule];
  const int32_t count = pool_.count(stack);
  return {r.count_max - count, r.count_min - count};
}

void GrammarMatcher::OrPosition(int32_t stack, uint32_t* mask) {
  const PositionMask& pm = *grammar_->mask(pool_.node(stack));
  if (!pm.counted) {
    pm.OrInto(mask);
    return;
  }
  auto [room, need] = RoomAndNeed(stack);
  pm.OrCountedInto(mask, room, need, &scratch_);
}

void GrammarMatcher::CheckUncertain(int32_t stack, const PositionMask& pm, uint32_t* mask) {
  int32_t parent = pool_.parent(stack);
  if (parent == kNoFrame || pm.uncertain.empty()) return;  // nothing may follow the root
  // The key: the stack's nodes, with the counts of the frames below the top
  // (the top's count only filters the result, below).
  nodes_.clear();
  nodes_.push_back(pool_.node(stack));
  for (int32_t f = parent; f != kNoFrame; f = pool_.parent(f)) {
    nodes_.push_back(pool_.node(f));
    if (pool_.count(f) != 0) nodes_.push_back(~pool_.count(f));
  }
  UncertainCache& cache = grammar_->uncertain_cache();
  UncertainCache::Tokens accepted = cache.Find(nodes_);
  if (!accepted) {
    accepted = std::make_shared<const std::vector<int32_t>>(AcceptedUncertain(parent, pm));
    cache.Insert(nodes_, accepted);
  }
  if (!pm.counted) {
    for (int32_t i : *accepted) mask[pm.uncertain[i].token >> 5] |= uint32_t{1} << (pm.uncertain[i].token & 31);
    return;
  }
  auto [room, need] = RoomAndNeed(stack);
  for (int32_t i : *accepted) {
    const PositionMask::Uncertain& u = pm.uncertain[i];
    if (PositionMask::Fits(u, room, need)) mask[u.token >> 5] |= uint32_t{1} << (u.token & 31);
  }
}

// The uncertain tokens of `pm` (indices into pm.uncertain) that the stack
// below the position (`parent`) accepts: each remainder is stepped from the
// closure of `parent`, in remainder order, reusing the levels of the
// previous remainder's prefix.
std::vector<int32_t> GrammarMatcher::AcceptedUncertain(int32_t parent, const PositionMask& pm) {
  std::vector<int32_t> accepted;
  if (levels_.empty()) levels_.resize(1);
  pda_.Closure({parent}, &levels_[0]);
  int32_t valid = 0;  // levels_[0..valid] hold the previous remainder's prefix
  for (size_t i = 0; i < pm.uncertain.size(); ++i) {
    const PositionMask::Uncertain& u = pm.uncertain[i];
    valid = std::min(valid, u.lcp);
    std::string_view rem = pm.remainder(u);
    if (levels_.size() <= rem.size()) levels_.resize(rem.size() + 1);
    int32_t k = valid;
    for (; k < static_cast<int32_t>(rem.size()); ++k) {
      if (levels_[k].stacks.empty()) break;
      pda_.Step(levels_[k], static_cast<uint8_t>(rem[k]), &levels_[k + 1]);
    }
    valid = k;
    if (k == static_cast<int32_t>(rem.size()) && !levels_[k].Dead()) accepted.push_back(static_cast<int32_t>(i));
  }
  return accepted;
}

void GrammarMatcher::FillNextTokenBitmask(int32_t* out) {
  const Vocabulary& v = grammar_->vocab();
  uint32_t* mask = reinterpret_cast<uint32_t*>(out);
  std::memset(mask, 0, sizeof(uint32_t) * v.mask_words());
  const State& cur = history_.back();
  if (cur.terminated) return;
  size_t mark = pool_.size();
  const std::vector<int32_t>& stacks = cur.set.stacks;
  for (size_t i = 0; i < stacks.size(); ++i) {
    int32_t node = pool_.node(stacks[i]), count = pool_.count(stacks[i]);
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) seen = pool_.node(stacks[j]) == node && pool_.count(stacks[j]) == count;
    if (!seen) OrPosition(stacks[i], mask);
  }
  for (int32_t s : stacks) CheckUncertain(s, *grammar_->mask(pool_.node(s)), mask);
  pool_.Truncate(mark);
  if (cur.set.popped) {
    for (int32_t id : v.eos_ids()) mask[id >> 5] |= uint32_t{1} << (id & 31);
  }
}

}  // namespace llmserve::engine_core::structured_output
