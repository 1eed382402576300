#pragma once
// UncertainCache: which uncertain tokens of a position a whole stack accepts
// (as indices into the position's uncertain list), remembered by the stack's
// nodes (top first, with the counts of counted frames below the top). A string position is met at
// every character of a string value with the same stack below it, and by
// every request that uses the grammar; its ~1,000 uncertain tokens are then
// checked against the stack once instead of at every step.
//
// Shared by the matchers of one CompiledGrammar; thread-safe. Bounded: when
// the stored token ids pass the budget the cache starts over.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace llmserve::engine_core::structured_output {

class UncertainCache {
 public:
  using Tokens = std::shared_ptr<const std::vector<int32_t>>;

  explicit UncertainCache(size_t max_token_ids = size_t{1} << 17) : max_token_ids_(max_token_ids) {}

  // The accepted tokens stored for the stack `nodes`, or null.
  Tokens Find(const std::vector<int32_t>& nodes) const;
  // Stores the accepted tokens of the stack `nodes`.
  void Insert(const std::vector<int32_t>& nodes, Tokens tokens);
  // Stacks stored now.
  size_t size() const;

 private:
  static std::string Key(const std::vector<int32_t>& nodes);

  const size_t max_token_ids_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Tokens> entries_;  // guarded by mu_
  size_t token_ids_ = 0;                              // guarded by mu_
};

}  // namespace llmserve::engine_core::structured_output
