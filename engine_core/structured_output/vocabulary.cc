#include "engine_core/structured_output/vocabulary.h"

#include <algorithm>

#include "engine_core/structured_output/position_mask.h"

namespace llmserve::engine_core::structured_output {

Vocabulary::~Vocabulary() = default;

StatusOr<std::shared_ptr<const Vocabulary>> Vocabulary::Create(std::vector<std::string> token_bytes,
                                                                std::vector<int32_t> eos_ids,
                                                                std::vector<int32_t> special_ids,
                                                                size_t cache_budget_bytes) {
  std::shared_ptr<Vocabulary> v(new Vocabulary());
  v->bytes_ = std::move(token_bytes);
  v->cache_budget_bytes_ = cache_budget_bytes;
  std::vector<bool> excluded(v->bytes_.size(), false);
  for (const auto* ids : {&eos_ids, &special_ids}) {
    for (int32_t id : *ids) {
      if (id < 0 || id >= v->size()) {
        return Status::InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary of " +
                                       std::to_string(v->size()));
      }
      excluded[id] = true;
    }
  }
  v->eos_ids_ = std::move(eos_ids);
  v->BuildTrie(excluded);
  return std::shared_ptr<const Vocabulary>(std::move(v));
}

bool Vocabulary::IsEos(int32_t id) const {
  return std::find(eos_ids_.begin(), eos_ids_.end(), id) != eos_ids_.end();
}

void Vocabulary::BuildTrie(const std::vector<bool>& excluded) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < size(); ++i)
    if (!excluded[i] && !bytes_[i].empty()) ids.push_back(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return bytes_[a] < bytes_[b]; });
  std::vector<int32_t> path;  // trie node index per depth - 1
  const std::string* prev = nullptr;
  for (int32_t id : ids) {
    const std::string& s = bytes_[id];
    size_t lcp = 0;
    if (prev) {
      while (lcp < s.size() && lcp < prev->size() && s[lcp] == (*prev)[lcp]) ++lcp;
    }
    path.resize(std::min(path.size(), lcp));
    for (size_t d = path.size(); d < s.size(); ++d) {
      path.push_back(static_cast<int32_t>(trie_.size()));
      trie_.push_back({static_cast<uint8_t>(s[d]), static_cast<int32_t>(d + 1), 0,
                       static_cast<int32_t>(trie_tokens_.size()), static_cast<int32_t>(trie_tokens_.size())});
    }
    TrieNode& last = trie_[path.back()];
    if (last.tok_end != static_cast<int32_t>(trie_tokens_.size())) {
      // Tokens are added in preorder, so a node's tokens are contiguous.
      last.tok_begin = last.tok_end = static_cast<int32_t>(trie_tokens_.size());
    }
    trie_tokens_.push_back(id);
    last.tok_end = static_cast<int32_t>(trie_tokens_.size());
    prev = &s;
  }
  // Subtree ends: a node's subtree stops at the next node of depth <= its own.
  std::vector<int32_t> open;
  for (int32_t i = 0; i < static_cast<int32_t>(trie_.size()); ++i) {
    while (!open.empty() && trie_[open.back()].depth >= trie_[i].depth) {
      trie_[open.back()].end = i;
      open.pop_back();
    }
    open.push_back(i);
  }
  for (int32_t i : open) trie_[i].end = static_cast<int32_t>(trie_.size());
}

int64_t Vocabulary::ShapeId(const std::string& shape) const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (auto it = shapes_.find(shape); it != shapes_.end()) return it->second;
  MakeRoom(shape.size());
  cache_bytes_ += shape.size();
  return shapes_.emplace(shape, next_shape_id_++).first->second;
}

std::shared_ptr<const PositionMask> Vocabulary::CachedMask(const std::string& key) const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second;
}

void Vocabulary::CacheMask(const std::string& key, std::shared_ptr<const PositionMask> mask) const {
  const size_t bytes = key.size() + mask->bytes();
  std::lock_guard<std::mutex> lock(cache_mu_);
  MakeRoom(bytes);
  if (cache_.emplace(key, std::move(mask)).second) cache_bytes_ += bytes;
}

size_t Vocabulary::cache_bytes() const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return cache_bytes_;
}

int64_t Vocabulary::cache_restarts() const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return cache_restarts_;
}

void Vocabulary::MakeRoom(size_t more) const {
  if (cache_bytes_ + more <= cache_budget_bytes_ || cache_bytes_ == 0) return;
  // Shape ids are not reused (next_shape_id_ goes on), so a compile that got
  // an id before this point caches under a key no new shape will have.
  cache_.clear();
  shapes_.clear();
  cache_bytes_ = 0;
  ++cache_restarts_;
}

}  // namespace llmserve::engine_core::structured_output
