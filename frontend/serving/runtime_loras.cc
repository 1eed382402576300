#include "frontend/serving/runtime_loras.h"

#include <glog/logging.h>

#include <nlohmann/json.hpp>

namespace llmserve::frontend::serving {

namespace {

constexpr auto kListTimeout = std::chrono::seconds(5);
constexpr auto kChangeTimeout = std::chrono::seconds(120);  // reading an adapter on every rank

openai::ApiError InvalidUserInput(std::string message) {
  openai::ApiError e = openai::MakeError(400, std::move(message));
  e.type = "InvalidUserInput";  // vLLM's type for these checks
  return e;
}

// The first failure among the ranks' add_lora / remove_lora results, if any.
std::optional<openai::ApiError> FirstFailure(const std::vector<std::string>& results) {
  for (const auto& text : results) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object() && j.value("ok", false)) continue;
    if (!j.is_object() || !j.contains("code")) return openai::MakeError(500, "unexpected engine answer: " + text);
    return openai::MakeError(j["code"].get<int>(), j.value("message", std::string()));
  }
  return std::nullopt;
}

}  // namespace

RuntimeLoras::RuntimeLoras(std::vector<openai::LoraCard> startup, std::string default_parent, UtilityCaller call)
    : cards_(std::move(startup)), default_parent_(std::move(default_parent)), call_(std::move(call)) {
  if (call_) thread_ = std::thread([this] { Run(); });
}

RuntimeLoras::~RuntimeLoras() {
  if (!thread_.joinable()) return;
  tasks_.Push(nullptr);
  thread_.join();
}

void RuntimeLoras::Run() {
  while (true) {
    auto task = tasks_.Pop(std::chrono::hours(24));
    if (!task) continue;
    if (!*task) return;
    (*task)();
  }
}

bool RuntimeLoras::Serves(const std::string& model) {
  if (cards_.Contains(model)) return true;
  if (!call_) return false;
  Sync();
  return cards_.Contains(model);
}

std::vector<openai::LoraCard> RuntimeLoras::Cards() {
  if (call_) Sync();
  return cards_.Cards();
}

std::optional<std::vector<openai::LoraCard>> RuntimeLoras::EngineCards() {
  auto lists = call_("list_loras", {}, kListTimeout);
  if (!lists.ok() || lists->empty()) return std::nullopt;
  // The union over ranks: a rank that restarted may not hold them all yet.
  std::vector<openai::LoraCard> cards;
  for (const auto& text : *lists) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) continue;
    for (const auto& a : j) {
      if (!a.is_object()) continue;
      openai::LoraCard c{a.value("name", std::string()), a.value("path", std::string()),
                         a.value("base_model_name", std::string())};
      if (c.name.empty() || openai::FindLoraCard(cards, c.name) != nullptr) continue;
      cards.push_back(std::move(c));
    }
  }
  return cards;
}

void RuntimeLoras::Sync() {
  auto cards = EngineCards();
  if (!cards) return;
  for (auto& c : *cards)
    if (c.parent.empty()) c.parent = default_parent_;
  cards_.Replace(std::move(*cards));
}

void RuntimeLoras::OnRankReady() {
  if (!call_) return;
  Post([this] {
    std::lock_guard<std::mutex> lock(change_mu_);
    auto cards = EngineCards();
    if (!cards) return;
    for (const auto& c : *cards) (void)call_("add_lora", {c.name, c.path, c.parent}, kChangeTimeout);
    Sync();
  });
}

RuntimeLoras::Answer RuntimeLoras::Load(const std::string& name, const std::string& path) {
  if (name.empty() || path.empty()) return {InvalidUserInput("Both 'lora_name' and 'lora_path' must be provided."), ""};
  std::lock_guard<std::mutex> lock(change_mu_);
  Sync();
  if (cards_.Contains(name))
    return {InvalidUserInput("The lora adapter '" + name + "' has already been loaded."), ""};
  auto results = call_("add_lora", {name, path, ""}, kChangeTimeout);
  if (!results.ok()) return {openai::FromStatus(results.status()), ""};
  if (auto failure = FirstFailure(*results)) {
    // Ranks read the same files, so they fail alike; if one took it anyway, undo that.
    bool some_took_it = false;
    for (const auto& r : *results) some_took_it = some_took_it || !FirstFailure({r});
    if (some_took_it) (void)call_("remove_lora", {name}, kChangeTimeout);
    return {failure, ""};
  }
  cards_.Add(openai::LoraCard{name, path, default_parent_});
  LOG(INFO) << "Loaded new LoRA adapter: name '" << name << "', path '" << path << "'";
  return {std::nullopt, "Success: LoRA adapter '" + name + "' added successfully."};
}

RuntimeLoras::Answer RuntimeLoras::Unload(const std::string& name) {
  if (name.empty()) return {InvalidUserInput("'lora_name' needs to be provided to unload a LoRA adapter."), ""};
  std::lock_guard<std::mutex> lock(change_mu_);
  Sync();
  if (!cards_.Remove(name)) {
    return {openai::MakeError(404, "The lora adapter '" + name + "' cannot be found."), ""};
  }
  auto results = call_("remove_lora", {name}, kChangeTimeout);
  if (!results.ok()) {
    LOG(WARNING) << "removing LoRA adapter '" << name << "' from the engines: " << results.status().message();
  } else if (auto failure = FirstFailure(*results)) {
    LOG(WARNING) << "removing LoRA adapter '" << name << "': " << failure->message;
  }
  LOG(INFO) << "Removed LoRA adapter: name '" << name << "'";
  return {std::nullopt, "Success: LoRA adapter '" + name + "' removed successfully."};
}

}  // namespace llmserve::frontend::serving
