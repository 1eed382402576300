#include "frontend/openai/lora_cards.h"

namespace llmserve::frontend::openai {

StatusOr<std::vector<LoraCard>> ParseLoraCards(const std::string& json_text, const std::string& default_parent) {
  std::vector<LoraCard> cards;
  if (json_text.empty()) return cards;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("--lora-modules: not valid JSON: ") + e.what());
  }
  if (!j.is_array()) return Status::InvalidArgument("--lora-modules: a JSON list of adapters is expected");
  for (const auto& m : j) {
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !m.contains("path") ||
        !m["path"].is_string()) {
      return Status::InvalidArgument("--lora-modules: each adapter needs string \"name\" and \"path\"");
    }
    LoraCard c{m["name"].get<std::string>(), m["path"].get<std::string>(), default_parent};
    if (m.contains("base_model_name") && m["base_model_name"].is_string() &&
        !m["base_model_name"].get<std::string>().empty()) {
      c.parent = m["base_model_name"].get<std::string>();
    }
    cards.push_back(std::move(c));
  }
  return cards;
}

nlohmann::json LoraModelCard(const LoraCard& card, int64_t created) {
  return {{"id", card.name},     {"object", "model"}, {"created", created},
          {"owned_by", "llmserve"}, {"root", card.path}, {"parent", card.parent}};
}

const LoraCard* FindLoraCard(const std::vector<LoraCard>& cards, const std::string& model) {
  for (const auto& c : cards) {
    if (c.name == model) return &c;
  }
  return nullptr;
}

bool LoraCardSet::Contains(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return FindLoraCard(cards_, name) != nullptr;
}

std::vector<LoraCard> LoraCardSet::Cards() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cards_;
}

bool LoraCardSet::Add(LoraCard card) {
  std::lock_guard<std::mutex> lock(mu_);
  if (FindLoraCard(cards_, card.name) != nullptr) return false;
  cards_.push_back(std::move(card));
  return true;
}

bool LoraCardSet::Remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = cards_.begin(); it != cards_.end(); ++it) {
    if (it->name == name) {
      cards_.erase(it);
      return true;
    }
  }
  return false;
}

void LoraCardSet::Replace(std::vector<LoraCard> cards) {
  std::lock_guard<std::mutex> lock(mu_);
  cards_ = std::move(cards);
}

}  // namespace llmserve::frontend::openai
