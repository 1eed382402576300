#include "frontend/generation_config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace llmserve::frontend {

namespace {

// The folder's generation_config.json, or an empty object when it has none.
nlohmann::json ReadGenerationConfig(const std::string& dir) {
  std::ifstream in(dir + "/generation_config.json");
  if (!in) return nlohmann::json::object();
  std::stringstream text;
  text << in.rdbuf();
  auto json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return json.is_object() ? json : nlohmann::json::object();
}

// Keys of `config` that are sampling defaults; others (eos_token_id,
// do_sample...) are not vLLM's sampling defaults either.
openai::GenerationDefaults DefaultsOf(const nlohmann::json& config) {
  openai::GenerationDefaults d;
  auto number = [&](const char* key) { return config.contains(key) && config[key].is_number(); };
  auto integer = [&](const char* key) { return config.contains(key) && config[key].is_number_integer(); };
  if (number("temperature")) d.temperature = config["temperature"].get<double>();
  if (number("top_p")) d.top_p = config["top_p"].get<double>();
  if (integer("top_k")) d.top_k = config["top_k"].get<int32_t>();
  if (number("min_p")) d.min_p = config["min_p"].get<double>();
  if (number("repetition_penalty")) d.repetition_penalty = config["repetition_penalty"].get<double>();
  if (integer("max_new_tokens")) d.max_tokens = config["max_new_tokens"].get<int32_t>();
  return d;
}

}  // namespace

StatusOr<openai::GenerationDefaults> LoadGenerationDefaults(const std::string& setting, const std::string& model_dir,
                                                            const std::string& override_json) {
  nlohmann::json config = nlohmann::json::object();
  if (setting == "auto") {
    config = ReadGenerationConfig(model_dir);
  } else if (setting != "vllm") {
    if (!std::filesystem::is_directory(setting))
      return Status::InvalidArgument("--generation-config: '" + setting + "' is not auto, vllm or a folder");
    config = ReadGenerationConfig(setting);
  }
  if (!override_json.empty()) {
    auto over = nlohmann::json::parse(override_json, nullptr, /*allow_exceptions=*/false);
    if (!over.is_object())
      return Status::InvalidArgument("--override-generation-config must be a JSON object, e.g. '{\"temperature\": 0.5}'");
    for (const auto& [key, value] : over.items()) {
      if (!value.is_number())
        return Status::InvalidArgument("--override-generation-config: '" + key + "' must be a number");
      config[key] = value;
    }
  }
  return DefaultsOf(config);
}

}  // namespace llmserve::frontend
