#include "frontend/serving/response_store.h"

namespace llmserve::frontend::serving {

void ResponseStore::Put(const std::string& id, nlohmann::json messages) {
  std::lock_guard<std::mutex> lock(mu_);
  if (conversations_.insert_or_assign(id, std::move(messages)).second) order_.push_back(id);
  while (order_.size() > capacity_) {
    conversations_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<nlohmann::json> ResponseStore::Get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = conversations_.find(id);
  if (it == conversations_.end()) return std::nullopt;
  return it->second;
}

}  // namespace llmserve::frontend::serving
