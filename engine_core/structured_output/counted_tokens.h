#pragma once
// CountedTokens: the count-aware part of a position mask in a counted rule
// (a JSON string with minLength/maxLength). The position's trie walk ignores
// the count of its frame and records, per token, how many item copies
// (characters) it starts and whether it leaves the loop (a closing quote).
// At mask time a frame that may still start `room` copies and needs `need`
// more before it may leave keeps the tokens that fit: one walk serves every
// count and every (minLength, maxLength).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmserve::engine_core::structured_output {

struct CountedTokens {
  struct Counted {
    int32_t token;
    int32_t starts;  // item copies started before the token ends or leaves
  };
  // Tokens that stay in the loop, grouped by copies started: group n is
  // open_ids[open_begin[n], open_begin[n + 1]).
  std::vector<int32_t> open_begin;
  std::vector<int32_t> open_ids;
  // Dense masks of the open tokens starting at most k copies, for the k
  // below which more than kMaxCleared tokens would be cleared from the
  // whole open set (empty when the open set is sparse).
  std::vector<std::vector<uint32_t>> open_at_most;
  // Accepted tokens that leave the loop and end in the tail.
  std::vector<Counted> exits;

  static constexpr int32_t kMaxCleared = 2048;
  static constexpr int32_t kMaxDenseMasks = 64;

  // Groups `open` by copies started and keeps `exits`; `dense` when the
  // open set is stored as a bitset of `mask_words` words.
  static CountedTokens Build(const std::vector<Counted>& open, std::vector<Counted> exits, bool dense,
                             int32_t mask_words);
  // The most copies an open token starts (-1 when there is none).
  int32_t max_open_starts() const { return static_cast<int32_t>(open_begin.size()) - 2; }
  // The bytes held (for cache budgets).
  size_t bytes() const;
};

}  // namespace llmserve::engine_core::structured_output
