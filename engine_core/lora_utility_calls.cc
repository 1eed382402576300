#include "engine_core/lora_utility_calls.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace llmserve::engine_core {

namespace {

std::string OkResult() { return nlohmann::json{{"ok", true}}.dump(); }

std::string ErrorResult(int code, const std::string& message) {
  return nlohmann::json{{"code", code}, {"message", message}}.dump();
}

std::string AddLoraResult(EngineCore& core, const std::vector<std::string>& args) {
  const std::string& name = args[0];
  for (const auto& a : core.ListLoras())
    if (a.name == name) return ErrorResult(400, "The lora adapter '" + name + "' has already been loaded.");
  Status s = core.AddLora(LoraAdapterInfo{name, args[1], args[2]});
  if (s.ok()) return OkResult();
  // vLLM's wording: its frontend answers 404 to "No adapter found", 400 to the rest.
  if (s.code() == StatusCode::kNotFound)
    return ErrorResult(404,
                       "Loading lora " + name + " failed: No adapter found for " + args[1] + " (" + s.message() + ")");
  return ErrorResult(400, "Loading lora " + name + " failed: " + s.message());
}

}  // namespace

std::optional<std::string> HandleLoraUtility(EngineCore& core, const proto::UtilityRequest& request) {
  const auto& args = request.args;
  if (request.method == "add_lora") {
    if (args.size() != 3) return ErrorResult(400, "add_lora takes a name, a path and a base model name");
    return AddLoraResult(core, args);
  }
  if (request.method == "remove_lora") {
    if (args.size() != 1) return ErrorResult(400, "remove_lora takes a name");
    Status s = core.RemoveLora(args[0]);
    return s.ok() ? OkResult() : ErrorResult(404, s.message());
  }
  if (request.method == "list_loras") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& a : core.ListLoras())
      list.push_back({{"name", a.name}, {"path", a.path}, {"base_model_name", a.base_model_name}});
    return list.dump();
  }
  return std::nullopt;
}

}  // namespace llmserve::engine_core
