#include "engine_core/structured_output/position_mask.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>

#include "engine_core/structured_output/pda.h"

namespace llmserve::engine_core::structured_output {

void PositionMask::OrInto(uint32_t* mask) const {
  if (!accepted_bits.empty()) {
    for (size_t i = 0; i < accepted_bits.size(); ++i) mask[i] |= accepted_bits[i];
  } else {
    for (int32_t id : accepted_ids) mask[id >> 5] |= uint32_t{1} << (id & 31);
  }
}

namespace {

constexpr int32_t kUnknown = -2;
constexpr int32_t kDead = -1;

// A lazily built DFA over the stack sets reachable from one position.
class LocalDfa {
 public:
  LocalDfa(const Grammar& g, int32_t node) : pda_(&g, &pool_) {
    StackSet init;
    init.stacks.push_back(pool_.Intern(node, kNoFrame));
    Add(std::move(init));
  }

  // The state after `byte` from `state`, or kDead.
  int32_t Next(int32_t state, uint8_t byte) {
    int32_t& t = trans_[state][byte];
    if (t != kUnknown) return t;
    StackSet out;
    pda_.Step(sets_[state], byte, &out);
    int32_t r = out.Dead() ? kDead : Add(std::move(out));
    trans_[state][byte] = r;  // Add may have moved trans_
    return r;
  }
  bool popped(int32_t state) const { return sets_[state].popped; }

 private:
  int32_t Add(StackSet set) {
    std::string key(reinterpret_cast<const char*>(set.stacks.data()), set.stacks.size() * sizeof(int32_t));
    key += set.popped ? 'P' : '-';
    auto [it, fresh] = ids_.emplace(std::move(key), static_cast<int32_t>(sets_.size()));
    if (fresh) {
      sets_.push_back(std::move(set));
      trans_.emplace_back();
      trans_.back().fill(kUnknown);
    }
    return it->second;
  }

  StackPool pool_;
  Pda pda_;
  std::vector<StackSet> sets_;
  std::vector<std::array<int32_t, 256>> trans_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace

std::shared_ptr<const PositionMask> ComputePositionMask(const Grammar& g, int32_t node,
                                                        const Vocabulary& vocab) {
  auto mask = std::make_shared<PositionMask>();
  LocalDfa dfa(g, node);
  const auto& trie = vocab.trie();
  const auto& toks = vocab.trie_tokens();
  std::vector<int32_t> accepted;
  std::vector<int32_t> state(1, 0);  // state per depth
  std::vector<int32_t> pops;         // depths (ancestors) where the rule ended
  int32_t n = static_cast<int32_t>(trie.size());
  for (int32_t i = 0; i < n;) {
    const Vocabulary::TrieNode& t = trie[i];
    while (!pops.empty() && pops.back() >= t.depth) pops.pop_back();
    int32_t s = dfa.Next(state[t.depth - 1], t.byte);
    if (s == kDead) {
      if (!pops.empty()) {
        for (int32_t k = t.tok_begin; k < trie[t.end - 1].tok_end; ++k)
          for (int32_t d : pops) mask->uncertain.push_back({toks[k], d, 0});
      }
      i = t.end;
      continue;
    }
    if (static_cast<int32_t>(state.size()) <= t.depth) state.resize(t.depth + 1);
    state[t.depth] = s;
    for (int32_t k = t.tok_begin; k < t.tok_end; ++k) accepted.push_back(toks[k]);
    if (dfa.popped(s)) pops.push_back(t.depth);
    ++i;
  }
  std::sort(accepted.begin(), accepted.end());
  if (static_cast<int64_t>(accepted.size()) * 32 > vocab.size()) {
    mask->accepted_bits.assign(vocab.mask_words(), 0);
    for (int32_t id : accepted) mask->accepted_bits[id >> 5] |= uint32_t{1} << (id & 31);
  } else {
    mask->accepted_ids = std::move(accepted);
  }
  auto rem = [&](const PositionMask::Uncertain& u) {
    return std::string_view(vocab.bytes(u.token)).substr(u.offset);
  };
  std::sort(mask->uncertain.begin(), mask->uncertain.end(),
            [&](const auto& a, const auto& b) { return rem(a) < rem(b); });
  for (size_t k = 1; k < mask->uncertain.size(); ++k) {
    std::string_view a = rem(mask->uncertain[k - 1]), b = rem(mask->uncertain[k]);
    size_t l = 0;
    while (l < a.size() && l < b.size() && a[l] == b[l]) ++l;
    mask->uncertain[k].lcp = static_cast<int32_t>(l);
  }
  return mask;
}

}  // namespace llmserve::engine_core::structured_output
