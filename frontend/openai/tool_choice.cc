#include "frontend/openai/tool_choice.h"

#include "frontend/tool_parsers/json_canon.h"

namespace llmserve::frontend::openai {

using nlohmann::json;

ToolChoiceMode ModeOf(const json& tools, const json& tool_choice) {
  const bool has_tools = tools.is_array() && !tools.empty();
  if (tool_choice.is_object()) return ToolChoiceMode::kNamed;
  if (tool_choice.is_string()) {
    const std::string& s = tool_choice.get_ref<const std::string&>();
    if (s == "none") return ToolChoiceMode::kNone;
    if (s == "required") return has_tools ? ToolChoiceMode::kRequired : ToolChoiceMode::kNone;
  }
  return has_tools ? ToolChoiceMode::kAuto : ToolChoiceMode::kNone;
}

namespace {

using Ordered = nlohmann::ordered_json;

// The function's parameter schema with its $defs moved into `defs`.
MaybeError Parameters(const Ordered& function, Ordered* defs, Ordered* out) {
  auto p = function.find("parameters");
  *out = p == function.end() || p->is_null() ? Ordered{{"type", "object"}, {"properties", Ordered::object()}} : *p;
  if (!out->is_object()) return BadRequest("tools: function '" + function["name"].get<std::string>() +
                                           "' has parameters that are not a JSON schema object", "tools");
  for (const char* key : {"$defs", "definitions"}) {
    auto d = out->find(key);
    if (d == out->end()) continue;
    for (auto it = d->begin(); it != d->end(); ++it) {
      auto have = defs->find(it.key());
      if (have != defs->end() && *have != *it) {
        return BadRequest("tools: functions define '" + it.key() + "' differently in $defs", "tools");
      }
      (*defs)[it.key()] = *it;
    }
    out->erase(key);
  }
  return std::nullopt;
}

}  // namespace

MaybeError ToolChoiceSchema(const Ordered& tools, const json& tool_choice, bool parallel_tool_calls,
                            std::optional<std::string>* schema) {
  const bool named = tool_choice.is_object();
  const bool required = tool_choice.is_string() && tool_choice.get<std::string>() == "required";
  if ((!named && !required) || !tools.is_array() || tools.empty()) return std::nullopt;
  Ordered defs = Ordered::object();
  if (named) {
    const std::string name = tool_choice["function"]["name"].get<std::string>();
    for (const auto& tool : tools) {
      if (tool["function"]["name"] != name) continue;
      Ordered params;
      LLMSERVE_API_TRY(Parameters(tool["function"], &defs, &params));
      if (!defs.empty()) params["$defs"] = defs;
      *schema = params.dump();
      return std::nullopt;
    }
    return BadRequest("'tool_choice' names a function that is not in 'tools'", "tool_choice");
  }
  Ordered alternatives = Ordered::array();
  for (const auto& tool : tools) {
    Ordered params;
    LLMSERVE_API_TRY(Parameters(tool["function"], &defs, &params));
    alternatives.push_back({{"type", "object"},
                            {"properties", {{"name", {{"type", "string"}, {"enum", {tool["function"]["name"]}}}},
                                            {"parameters", params}}},
                            {"required", {"name", "parameters"}}});
  }
  Ordered s = {{"type", "array"}, {"minItems", 1}, {"items", {{"anyOf", alternatives}}}};
  if (!parallel_tool_calls) s["maxItems"] = 1;
  if (!defs.empty()) s["$defs"] = defs;
  *schema = s.dump();
  return std::nullopt;
}

std::vector<FunctionCall> CallsFromConstrainedOutput(ToolChoiceMode mode, const std::string& named,
                                                     const std::string& output) {
  using ordered = nlohmann::ordered_json;
  const ordered value = ordered::parse(output, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return {};
  std::vector<FunctionCall> calls;
  if (mode == ToolChoiceMode::kNamed) {
    calls.push_back({named, output});  // vLLM passes the constrained text through
  } else if (mode == ToolChoiceMode::kRequired && value.is_array()) {
    for (const auto& call : value) {
      if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) return {};
      std::string arguments;
      tool_parsers::CanonicalJson(call.value("parameters", ordered::object()).dump(), &arguments);
      calls.push_back({call["name"].get<std::string>(), std::move(arguments)});
    }
  }
  return calls;
}

}  // namespace llmserve::frontend::openai
