#include "engine_core/structured_output/uncertain_cache.h"

namespace llmserve::engine_core::structured_output {

std::string UncertainCache::Key(const std::vector<int32_t>& nodes) {
  return std::string(reinterpret_cast<const char*>(nodes.data()), nodes.size() * sizeof(int32_t));
}

UncertainCache::Tokens UncertainCache::Find(const std::vector<int32_t>& nodes) const {
  std::string key = Key(nodes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

void UncertainCache::Insert(const std::vector<int32_t>& nodes, Tokens tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  if (token_ids_ + tokens->size() > max_token_ids_) {
    entries_.clear();
    token_ids_ = 0;
  }
  size_t count = tokens->size();
  if (entries_.try_emplace(Key(nodes), std::move(tokens)).second) token_ids_ += count;
}

size_t UncertainCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace llmserve::engine_core::structured_output
