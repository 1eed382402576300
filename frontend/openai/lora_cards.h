#pragma once
// The LoRA adapters a frontend serves (--lora-modules, from the launcher):
// each is a model name clients may send, and a /v1/models card with vLLM's
// fields (id = the name, root = the adapter's path, parent = its base model,
// no max_model_len).

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status_or.h"

namespace llmserve::frontend::openai {

struct LoraCard {
  std::string name;    // what requests put in "model"
  std::string path;    // the adapter directory
  std::string parent;  // the base model's served name
};

// Parses the launcher's JSON list [{"name", "path", "base_model_name"?}, ...];
// a missing or empty base_model_name becomes `default_parent`. "" is no adapters.
StatusOr<std::vector<LoraCard>> ParseLoraCards(const std::string& json_text, const std::string& default_parent);

// The adapter's /v1/models entry.
nlohmann::json LoraModelCard(const LoraCard& card, int64_t created);

// The card named `model`, or null.
const LoraCard* FindLoraCard(const std::vector<LoraCard>& cards, const std::string& model);

// The adapters one frontend serves now, shared by its handler threads: the
// startup ones, changed by /v1/load_lora_adapter and /v1/unload_lora_adapter.
class LoraCardSet {
 public:
  explicit LoraCardSet(std::vector<LoraCard> cards = {}) : cards_(std::move(cards)) {}
  bool Contains(const std::string& name) const;
  std::vector<LoraCard> Cards() const;
  // False when the name is taken.
  bool Add(LoraCard card);
  // False when the name is not served.
  bool Remove(const std::string& name);
  void Replace(std::vector<LoraCard> cards);

 private:
  mutable std::mutex mu_;
  std::vector<LoraCard> cards_;  // in load order
};

}  // namespace llmserve::frontend::openai
