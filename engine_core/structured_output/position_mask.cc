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

void PositionMask::OrCountedInto(uint32_t* mask, int32_t room, int32_t need, std::vector<uint32_t>* scratch) const {
  const CountedTokens& c = *counted;
  auto set = [&](int32_t id) { mask[id >> 5] |= uint32_t{1} << (id & 31); };
  const int32_t max_starts = c.max_open_starts();
  if (room >= max_starts) {
    OrInto(mask);
  } else if (room < static_cast<int32_t>(c.open_at_most.size())) {
    const std::vector<uint32_t>& bits = c.open_at_most[room];
    for (size_t i = 0; i < bits.size(); ++i) mask[i] |= bits[i];
  } else if (!accepted_bits.empty()) {
    // Every open token but the few that start more than `room` copies; the
    // clearing happens in `scratch`, since `mask` holds other positions' bits.
    scratch->assign(accepted_bits.begin(), accepted_bits.end());
    for (int32_t i = c.open_begin[room + 1]; i < static_cast<int32_t>(c.open_ids.size()); ++i) {
      (*scratch)[c.open_ids[i] >> 5] &= ~(uint32_t{1} << (c.open_ids[i] & 31));
    }
    for (size_t i = 0; i < scratch->size(); ++i) mask[i] |= (*scratch)[i];
  } else {
    for (int32_t i = 0; i < c.open_begin[room + 1]; ++i) set(c.open_ids[i]);
  }
  for (const CountedTokens::Counted& e : c.exits) {
    if (e.starts <= room && e.starts >= need) set(e.token);
  }
}


LocalDfa::LocalDfa(const Grammar& g) : g_(&g), pda_(&g, &pool_) {}

int32_t LocalDfa::Start(int32_t node) {
  StackSet init;
  init.stacks.push_back(pool_.Intern(node, kNoFrame, kUnknownCount));
  return Add(std::move(init));
}

int32_t LocalDfa::Slow(int32_t state, uint8_t byte) {
  if (!viable_[state].Has(byte)) return trans_[state][byte] = kDead;
  RecordOp(state, byte);
  StackSet out;
  pda_.Step(sets_[state], byte, &out);
  int32_t r = out.Dead() ? kDead : Add(std::move(out));
  trans_[state][byte] = r;
  return r;
}

void LocalDfa::RecordOp(int32_t state, uint8_t byte) {
  bool first = true;
  CountOp op = CountOp::kNone;
  for (int32_t st : sets_[state].stacks) {
    if (pool_.count(st) != kUnknownCount) continue;
    for (const ByteEdge& e : g_->nodes()[pool_.node(st)].bytes) {
      if (!e.set.Has(byte)) continue;
      if (!first && e.op != op) ambiguous_ = true;
      op = e.op;
      first = false;
    }
  }
  ops_[state][byte] = op;
}

int32_t LocalDfa::Add(StackSet set) {
  std::string key(reinterpret_cast<const char*>(set.stacks.data()), set.stacks.size() * sizeof(int32_t));
  key += set.popped ? 'P' : '-';
  auto [it, fresh] = ids_.emplace(std::move(key), static_cast<int32_t>(sets_.size()));
  if (fresh) {
    popped_.push_back(set.popped);
    ByteSet viable;  // bytes some stack top can consume
    for (int32_t st : set.stacks)
      for (const ByteEdge& e : g_->nodes()[pool_.node(st)].bytes) viable |= e.set;
    viable_.push_back(viable);
    sets_.push_back(std::move(set));
    trans_.emplace_back();
    trans_.back().fill(kUnknown);
    ops_.emplace_back();
    ops_.back().fill(CountOp::kNone);
  }
  return it->second;
}

namespace {

// Sorts `mask`'s uncertain tokens by remainder and lays the remainders out in
// one buffer. On entry each entry's `begin` holds its offset in the token.
void SortUncertainByRemainder(const Vocabulary& vocab, PositionMask* mask) {
  auto rem = [&](const PositionMask::Uncertain& u) {
    return std::string_view(vocab.bytes(u.token)).substr(u.begin);
  };
  std::sort(mask->uncertain.begin(), mask->uncertain.end(),
            [&](const auto& a, const auto& b) { return rem(a) < rem(b); });
  std::string_view prev;
  for (PositionMask::Uncertain& u : mask->uncertain) {
    std::string_view r = rem(u);
    size_t l = 0;
    while (l < prev.size() && l < r.size() && prev[l] == r[l]) ++l;
    u.lcp = static_cast<int32_t>(l);
    u.begin = static_cast<int32_t>(mask->remainders.size());
    u.size = static_cast<int32_t>(r.size());
    mask->remainders.append(r);
    prev = r;
  }
}

// Stores the accepted tokens (`bits`, `count` of them) densely or as ids.
void StoreAccepted(std::vector<uint32_t> bits, int64_t count, const Vocabulary& vocab, PositionMask* mask) {
  if (count * 32 > vocab.size()) {
    mask->accepted_bits = std::move(bits);
    return;
  }
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint32_t b = bits[w]; b; b &= b - 1) {
      mask->accepted_ids.push_back(static_cast<int32_t>(w * 32 + __builtin_ctz(b)));
    }
  }
}

}  // namespace

std::shared_ptr<const PositionMask> ComputePositionMask(LocalDfa& dfa, int32_t node, const Vocabulary& vocab) {
  auto mask = std::make_shared<PositionMask>();
  const auto& trie = vocab.trie();
  const auto& toks = vocab.trie_tokens();
  const bool counted = dfa.grammar().rules()[dfa.grammar().nodes()[node].rule].counted();
  std::vector<uint32_t> bits(vocab.mask_words(), 0);
  int64_t count = 0;
  std::vector<int32_t> state(1, dfa.Start(node));  // state per depth
  std::vector<int32_t> starts(1, 0);                // counted: copies started per depth
  std::vector<bool> exited(1, false);               // counted: left the loop by this depth
  std::vector<CountedTokens::Counted> open, exits;
  std::vector<int32_t> pops;         // depths (ancestors) where the rule ended
  int32_t n = static_cast<int32_t>(trie.size());
  for (int32_t i = 0; i < n;) {
    const Vocabulary::TrieNode& t = trie[i];
    while (!pops.empty() && pops.back() >= t.depth) pops.pop_back();
    int32_t s = dfa.Next(state[t.depth - 1], t.byte);
    if (s == LocalDfa::kDead) {
      if (!pops.empty()) {
        for (int32_t k = t.tok_begin; k < trie[t.end - 1].tok_end; ++k)
          for (int32_t d : pops) mask->uncertain.push_back({toks[k], d, 0, 0, counted ? starts[d] : 0});
      }
      i = t.end;
      continue;
    }
    if (static_cast<int32_t>(state.size()) <= t.depth) {
      state.resize(t.depth + 1);
      starts.resize(t.depth + 1);
      exited.resize(t.depth + 1);
    }
    state[t.depth] = s;
    if (counted) {
      CountOp op = dfa.op(state[t.depth - 1], t.byte);
      starts[t.depth] = starts[t.depth - 1] + (op == CountOp::kStart ? 1 : 0);
      exited[t.depth] = exited[t.depth - 1] || op == CountOp::kExit;
    }
    for (int32_t k = t.tok_begin; k < t.tok_end; ++k) {
      if (counted && exited[t.depth]) {
        exits.push_back({toks[k], starts[t.depth]});
        continue;
      }
      if (counted) open.push_back({toks[k], starts[t.depth]});
      bits[toks[k] >> 5] |= uint32_t{1} << (toks[k] & 31);
      ++count;
    }
    if (dfa.popped(s)) pops.push_back(t.depth);
    ++i;
  }
  StoreAccepted(std::move(bits), count, vocab, mask.get());
  if (counted) {
    mask->counted = std::make_shared<const CountedTokens>(
        CountedTokens::Build(open, std::move(exits), !mask->accepted_bits.empty(), vocab.mask_words()));
  }
  SortUncertainByRemainder(vocab, mask.get());
  return mask;
}

}  // namespace llmserve::engine_core::structured_output
