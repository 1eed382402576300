#pragma once
// The LoRA adapters a frontend serves (--lora-modules, from the launcher):
// each is a model name clients may send, and a /v1/models card with vLLM's
// fields (id = the name, root = the adapter's path, parent = its base model,
// no max_model_len).

#include <cstdint>
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

}  // namespace llmserve::frontend::openai
