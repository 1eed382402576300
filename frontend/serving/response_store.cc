#include "frontend/serving/response_store.h"

namespace llmserve::frontend::serving {

void ResponseStore::Put(const std::string& id, nlohmann::json messages, nlohmann::json response) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stored_.insert_or_assign(id, Stored{std::move(messages), std::move(response)}).second) order_.push_back(id);
  while (order_.size() > capacity_) {
    stored_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<nlohmann::json> ResponseStore::Get(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stored_.find(id);
  if (it == stored_.end()) return std::nullopt;
  return it->second.messages;
}

std::optional<nlohmann::json> ResponseStore::GetResponse(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stored_.find(id);
  if (it == stored_.end()) return std::nullopt;
  return it->second.response;
}

}  // namespace llmserve::frontend::serving
