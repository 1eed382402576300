#pragma once
// Vocabulary: each token's bytes (as the tokenizer's TokenBytes gives them),
// the EOS ids, and a byte trie over the tokens in preorder, the structure a
// mask computation walks once with early pruning. It also owns the cache of
// position masks shared by every grammar compiled for this vocabulary,
// bounded in bytes: past its budget it starts over (grammars keep the masks
// they hold), so a stream of distinct constraints cannot grow it for ever.
//
// The library does not depend on the tokenizer: callers pass the byte
// strings. Tokens with no bytes, EOS ids and ids listed as special are never
// allowed by a grammar; EOS is allowed exactly when the grammar can end.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status_or.h"

namespace llmserve::engine_core::structured_output {

struct PositionMask;

class Vocabulary {
 public:
  // A trie node; the root is implicit. Nodes are in preorder, so a node's
  // subtree is [its index, end).
  struct TrieNode {
    uint8_t byte;
    int32_t depth;      // bytes from the root to here, >= 1
    int32_t end;        // index just past the subtree
    int32_t tok_begin;  // this node's tokens: trie_tokens()[tok_begin, tok_end)
    int32_t tok_end;
  };

  // Errors: an EOS or special id outside [0, size).
  static StatusOr<std::shared_ptr<const Vocabulary>> Create(std::vector<std::string> token_bytes,
                                                            std::vector<int32_t> eos_ids,
                                                            std::vector<int32_t> special_ids = {},
                                                            size_t cache_budget_bytes = kDefaultCacheBudgetBytes);
  static constexpr size_t kDefaultCacheBudgetBytes = size_t{256} << 20;
  ~Vocabulary();

  // Number of token ids.
  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  // int32 words in a mask row: ceil(size / 32).
  int32_t mask_words() const { return (size() + 31) / 32; }
  // The bytes of token `id`.
  const std::string& bytes(int32_t id) const { return bytes_[id]; }
  // The EOS ids.
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  // True when `id` is one of the EOS ids.
  bool IsEos(int32_t id) const;
  // The trie in preorder.
  const std::vector<TrieNode>& trie() const { return trie_; }
  // Token ids referenced by trie nodes.
  const std::vector<int32_t>& trie_tokens() const { return trie_tokens_; }

  // An id for the leaf-rule shape `shape`: the same for equal shapes until
  // the cache starts over; never reused for another shape.
  int64_t ShapeId(const std::string& shape) const;
  // The cached mask for key `key`, or null.
  std::shared_ptr<const PositionMask> CachedMask(const std::string& key) const;
  // Stores a mask under `key` (thread-safe).
  void CacheMask(const std::string& key, std::shared_ptr<const PositionMask> mask) const;
  // Bytes the cache holds now (masks and shape keys) and how often it started over.
  size_t cache_bytes() const;
  int64_t cache_restarts() const;

 private:
  Vocabulary() = default;
  void BuildTrie(const std::vector<bool>& excluded);
  // Empties the cache when `more` bytes would take it past its budget.
  void MakeRoom(size_t more) const;  // cache_mu_ held

  std::vector<std::string> bytes_;
  std::vector<int32_t> eos_ids_;
  std::vector<TrieNode> trie_;
  std::vector<int32_t> trie_tokens_;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::shared_ptr<const PositionMask>> cache_;
  mutable std::unordered_map<std::string, int64_t> shapes_;
  size_t cache_budget_bytes_ = kDefaultCacheBudgetBytes;
  mutable size_t cache_bytes_ = 0;
  mutable int64_t next_shape_id_ = 0;
  mutable int64_t cache_restarts_ = 0;
};

}  // namespace llmserve::engine_core::structured_output
