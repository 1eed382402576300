#include "frontend/chat_template/chat_template.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/tokenizer/gguf_tokenizer.h"
#include "jinja/json_value.h"
#include "jinja/template.h"

namespace llmserve::frontend {
namespace {

// The token attributes HF's special_tokens_map exposes to templates.
const char* const kSpecialTokenKeys[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                         "pad_token", "cls_token", "mask_token"};

StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

StatusOr<nlohmann::ordered_json> ReadJson(const std::filesystem::path& path) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status::DataLoss(path.string() + ": not valid JSON");
  return j;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> SpecialTokens(const nlohmann::ordered_json& config) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!config.is_object()) return out;
  for (const char* key : kSpecialTokenKeys) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    if (it->is_string()) {
      out.emplace_back(key, it->get<std::string>());
    } else if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
      out.emplace_back(key, (*it)["content"].get<std::string>());
    } else {
      return Status::InvalidArgument(std::string("tokenizer_config.json: ") + key +
                                     " must be a string or an object with a string 'content'");
    }
  }
  return out;
}

// `chat_template` as a string or a list of {name, template} -> name -> source.
StatusOr<std::map<std::string, std::string>> TemplateSources(const nlohmann::ordered_json& value,
                                                             const std::string& where) {
  std::map<std::string, std::string> out;
  if (value.is_string()) {
    out["default"] = value.get<std::string>();
    return out;
  }
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      const auto& entry = value[i];
      if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
          !entry["name"].is_string() || !entry["template"].is_string()) {
        return Status::InvalidArgument(where + ": chat_template[" + std::to_string(i) +
                                       "] must be an object with string 'name' and 'template'");
      }
      out[entry["name"].get<std::string>()] = entry["template"].get<std::string>();
    }
    if (out.empty()) return Status::InvalidArgument(where + ": chat_template is an empty list");
    return out;
  }
  if (value.is_null()) return Status::NotFound(where + " has no chat_template");
  return Status::InvalidArgument(where + ": chat_template must be a string or a list of {name, template}");
}

}  // namespace

StatusOr<ChatTemplate> ChatTemplate::FromSource(const std::string& source,
                                                std::vector<std::pair<std::string, std::string>> special_tokens,
                                                ChatTemplateOptions options) {
  ChatTemplate t;
  auto parsed = jinja::Template::Parse(source);
  if (!parsed.ok()) return parsed.status();
  t.templates_["default"] = std::move(parsed).value();
  t.special_tokens_ = std::move(special_tokens);
  t.options_ = std::move(options);
  return t;
}

StatusOr<ChatTemplate> ChatTemplate::FromTokenizerConfig(const nlohmann::ordered_json& config,
                                                         ChatTemplateOptions options) {
  if (!config.is_object()) return Status::InvalidArgument("tokenizer_config.json must hold a JSON object");
  auto it = config.find("chat_template");
  LLMSERVE_ASSIGN_OR_RETURN(auto sources, TemplateSources(it == config.end() ? nlohmann::ordered_json()
                                                                             : *it, "tokenizer_config.json"));
  ChatTemplate t;
  for (const auto& [name, source] : sources) {
    auto parsed = jinja::Template::Parse(source);
    if (!parsed.ok()) return parsed.status().WithContext("chat template '" + name + "'");
    t.templates_[name] = std::move(parsed).value();
  }
  LLMSERVE_ASSIGN_OR_RETURN(t.special_tokens_, SpecialTokens(config));
  t.options_ = std::move(options);
  return t;
}

StatusOr<ChatTemplate> ChatTemplate::FromModelDir(const std::string& dir, ChatTemplateOptions options,
                                                  const std::string& source) {
  namespace fs = std::filesystem;
  fs::path root(dir);
  std::error_code ec;
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  if (!fs::is_directory(root, ec)) {
    // A GGUF file: its metadata holds the tokenizer config (and the chat template, if any).
    LLMSERVE_ASSIGN_OR_RETURN(auto gguf, common::tokenizer::GgufTokenizerFiles(dir));
    if (!gguf) return Status::NotFound(dir + " is neither a directory nor a GGUF model");
    config = nlohmann::ordered_json::parse(gguf->tokenizer_config_json, nullptr, /*allow_exceptions=*/false);
    if (!config.is_object()) return Status::InvalidArgument(dir + ": its tokenizer config is not a JSON object");
    if (!source.empty()) config["chat_template"] = source;
    if (!config.contains("chat_template")) return Status::NotFound(dir + " has no tokenizer.chat_template");
    auto t = FromTokenizerConfig(config, std::move(options));
    if (!t.ok()) return t.status().WithContext(dir);
    return t;
  }
  if (fs::exists(root / "tokenizer_config.json", ec)) {
    LLMSERVE_ASSIGN_OR_RETURN(config, ReadJson(root / "tokenizer_config.json"));
    if (!config.is_object()) return Status::InvalidArgument((root / "tokenizer_config.json").string() + " must hold a JSON object");
  }
  if (!source.empty()) {
    config["chat_template"] = source;
  } else if (fs::exists(root / "chat_template.jinja", ec)) {
    LLMSERVE_ASSIGN_OR_RETURN(std::string source, ReadFile(root / "chat_template.jinja"));
    config["chat_template"] = source;
  } else if (fs::exists(root / "chat_template.json", ec)) {
    LLMSERVE_ASSIGN_OR_RETURN(auto j, ReadJson(root / "chat_template.json"));
    if (!j.is_object() || !j.contains("chat_template")) {
      return Status::InvalidArgument((root / "chat_template.json").string() + " has no chat_template");
    }
    config["chat_template"] = j["chat_template"];
  } else if (!config.contains("chat_template")) {
    return Status::NotFound(dir + " has no chat template (looked for chat_template.jinja, chat_template.json and "
                                  "chat_template in tokenizer_config.json)");
  }
  auto t = FromTokenizerConfig(config, std::move(options));
  if (!t.ok()) return t.status().WithContext(dir);
  return t;
}

StatusOr<std::string> ResolveChatTemplateArgument(const std::string& argument) {
  std::error_code ec;
  if (std::filesystem::exists(argument, ec)) {
    std::ifstream file(argument, std::ios::binary);
    std::ostringstream text;
    if (!std::filesystem::is_regular_file(argument, ec) || !(text << file.rdbuf()) || text.str().empty())
      return Status::InvalidArgument("--chat-template " + argument + " is not a readable, non-empty file");
    return text.str();
  }
  if (argument.find_first_of("{}\n") == std::string::npos) {
    return Status::InvalidArgument("--chat-template '" + argument +
                                   "' looks like a file path, but there is no such file");
  }
  std::string out;
  for (size_t i = 0; i < argument.size(); ++i) {
    const char c = argument[i];
    const char next = i + 1 < argument.size() ? argument[i + 1] : '\0';
    const char* decoded = c != '\\' ? nullptr
                          : next == 'n' ? "\n" : next == 't' ? "\t" : next == 'r' ? "\r"
                          : next == '\\' ? "\\" : next == '\'' ? "'" : next == '"' ? "\"" : nullptr;
    if (decoded != nullptr) {
      out += decoded;
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> ChatTemplate::TemplateNames() const {
  std::vector<std::string> names;
  for (const auto& kv : templates_) names.push_back(kv.first);
  return names;
}

StatusOr<std::string> ChatTemplate::Render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                           const nlohmann::ordered_json& tools,
                                           const nlohmann::ordered_json& extra_kwargs) const {
  if (!messages.is_array()) return Status::InvalidArgument("messages must be an array");
  if (!tools.is_null() && !tools.is_array()) return Status::InvalidArgument("tools must be an array or null");
  if (!extra_kwargs.is_null() && !extra_kwargs.is_object()) {
    return Status::InvalidArgument("chat_template_kwargs must be an object");
  }
  std::string name = options_.template_name;
  if (name.empty()) {
    name = (!tools.is_null() && templates_.count("tool_use")) ? "tool_use" : "default";
  }
  auto it = templates_.find(name);
  if (it == templates_.end()) {
    if (!options_.template_name.empty() || templates_.size() != 1) {
      return Status::NotFound("no chat template named '" + name + "'");
    }
    it = templates_.begin();
  }
  std::vector<std::pair<std::string, jinja::Value>> vars;
  vars.reserve(8 + special_tokens_.size() + (extra_kwargs.is_object() ? extra_kwargs.size() : 0));
  for (const auto& [k, v] : special_tokens_) vars.emplace_back(k, jinja::Value::String(v));
  if (extra_kwargs.is_object()) {
    for (const auto& [k, v] : extra_kwargs.items()) {
      if (k == "messages" || k == "tools" || k == "documents" || k == "add_generation_prompt") {
        return Status::InvalidArgument("chat_template_kwargs may not set '" + k + "'");
      }
      bool replaced = false;
      for (auto& var : vars) {
        if (var.first == k) {
          var.second = jinja::FromJson(v);
          replaced = true;
        }
      }
      if (!replaced) vars.emplace_back(k, jinja::FromJson(v));
    }
  }
  vars.emplace_back("messages", jinja::FromJson(messages));
  vars.emplace_back("tools", jinja::FromJson(tools));
  vars.emplace_back("documents", jinja::Value::None());
  vars.emplace_back("add_generation_prompt", jinja::Value::Bool(add_generation_prompt));
  jinja::RenderEnv env{options_.now, options_.max_render_steps};
  return it->second->Render(std::move(vars), env);
}

StatusOr<std::string> ChatTemplate::Render(const nlohmann::json& messages, bool add_generation_prompt,
                                           const nlohmann::json& tools, const nlohmann::json& extra_kwargs) const {
  return Render(nlohmann::ordered_json::parse(messages.dump()), add_generation_prompt,
                nlohmann::ordered_json::parse(tools.dump()), nlohmann::ordered_json::parse(extra_kwargs.dump()));
}

}  // namespace llmserve::frontend
