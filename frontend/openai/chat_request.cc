#include "frontend/openai/chat_request.h"

#include <limits>
#include <set>

#include "frontend/openai/beam_search_request.h"
#include "frontend/openai/request_body.h"
#include "frontend/openai/structured_outputs_request.h"
#include "frontend/openai/tool_choice.h"

namespace llmserve::frontend::openai {
namespace {


const std::set<std::string>& Roles() {
  static const std::set<std::string> roles = {"system", "developer", "user", "assistant", "tool", "function"};
  return roles;
}

MaybeError NormalizeContent(const nlohmann::json& content, const std::string& where, nlohmann::json* out) {
  if (content.is_null() || content.is_string()) {
    *out = content;
    return std::nullopt;
  }
  if (!content.is_array()) {
    return BadRequest(where + ".content must be a string or an array of content parts, got " + JsonTypeName(content), "messages");
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const nlohmann::json& part = content[i];
    const std::string at = where + ".content[" + std::to_string(i) + "]";
    if (part.is_string()) {  // vLLM accepts bare strings as text parts
      if (i > 0) text += "\n";
      text += part.get<std::string>();
      continue;
    }
    if (!part.is_object()) return BadRequest(at + " must be an object, got " + JsonTypeName(part), "messages");
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) return BadRequest(at + ".type must be a string", "messages");
    const std::string& kind = type->get_ref<const std::string&>();
    if (kind != "text") {
      return BadRequest(at + " has type '" + kind + "'; only 'text' content parts are supported by this model", "messages");
    }
    auto t = part.find("text");
    if (t == part.end() || !t->is_string()) return BadRequest(at + ".text must be a string", "messages");
    if (i > 0) text += "\n";
    text += t->get<std::string>();
  }
  *out = std::move(text);
  return std::nullopt;
}

}  // namespace

MaybeError ReadMessages(const nlohmann::json& messages, nlohmann::json* out) {
  if (messages.is_null()) return BadRequest("'messages' is required", "messages");
  if (!messages.is_array()) return BadRequest("'messages' must be an array, got " + JsonTypeName(messages), "messages");
  if (messages.empty()) return BadRequest("'messages' must not be empty", "messages");
  nlohmann::json normalized = nlohmann::json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const nlohmann::json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return BadRequest(where + " must be an object, got " + JsonTypeName(m), "messages");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return BadRequest(where + ".role must be a string", "messages");
    if (!Roles().count(role->get<std::string>())) {
      return BadRequest(where + ".role '" + role->get<std::string>() +
                            "' is not one of system, developer, user, assistant, tool, function",
                        "messages");
    }
    nlohmann::json message = m;
    auto content = m.find("content");
    nlohmann::json text;
    LLMSERVE_API_TRY(NormalizeContent(content == m.end() ? nlohmann::json() : *content, where, &text));
    bool has_tool_calls = m.contains("tool_calls") && !m["tool_calls"].is_null();
    if (text.is_null() && !(role->get<std::string>() == "assistant" && has_tool_calls)) {
      return BadRequest(where + ".content is required", "messages");
    }
    message["content"] = std::move(text);
    if (has_tool_calls && !m["tool_calls"].is_array()) {
      return BadRequest(where + ".tool_calls must be an array", "messages");
    }
    for (const char* key : {"name", "tool_call_id"}) {
      if (m.contains(key) && !m[key].is_null() && !m[key].is_string()) {
        return BadRequest(where + "." + key + " must be a string", "messages");
      }
    }
    normalized.push_back(std::move(message));
  }
  *out = std::move(normalized);
  return std::nullopt;
}

MaybeError ReadTools(FieldReader& reader, nlohmann::json* tools, nlohmann::json* tool_choice) {
  reader.Known("tools");
  reader.Known("tool_choice");
  if (const nlohmann::json* t = reader.Get("tools")) {
    if (!t->is_array()) return BadRequest("'tools' must be an array, got " + JsonTypeName(*t), "tools");
    for (size_t i = 0; i < t->size(); ++i) {
      const nlohmann::json& tool = (*t)[i];
      const std::string where = "tools[" + std::to_string(i) + "]";
      if (StringMember(tool, "type") != "function") {
        return BadRequest(where + " must be an object with type 'function'", "tools");
      }
      auto fn = tool.find("function");
      if (fn == tool.end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) {
        return BadRequest(where + ".function must be an object with a string 'name'", "tools");
      }
    }
    *tools = *t;
  }
  if (const nlohmann::json* c = reader.Get("tool_choice")) {
    if (c->is_string()) {
      const std::string& s = c->get_ref<const std::string&>();
      if (s != "none" && s != "auto" && s != "required") {
        return BadRequest("'tool_choice' must be 'none', 'auto', 'required' or a named function, got '" + s + "'", "tool_choice");
      }
      if (s == "required" && tools->is_null()) {
        return BadRequest("'tool_choice' is 'required' but no 'tools' were given", "tool_choice");
      }
    } else if (c->is_object()) {
      auto fn = c->find("function");
      if (c->value("type", std::string()) != "function" || fn == c->end() || !fn->is_object() ||
          !fn->contains("name") || !(*fn)["name"].is_string()) {
        return BadRequest("'tool_choice' object must be {\"type\": \"function\", \"function\": {\"name\": ...}}", "tool_choice");
      }
      bool found = false;
      if (tools->is_array()) {
        for (const auto& tool : *tools) found = found || tool["function"]["name"] == (*fn)["name"];
      }
      if (!found) {
        return BadRequest("'tool_choice' names function '" + (*fn)["name"].get<std::string>() +
                              "', which is not in 'tools'",
                          "tool_choice");
      }
    } else {
      return BadRequest("'tool_choice' must be a string or an object, got " + JsonTypeName(*c), "tool_choice");
    }
    *tool_choice = *c;
  }
  return std::nullopt;
}

MaybeError ParseChatCompletionRequest(std::string_view body, const ParseOptions& options,
                                      ChatCompletionRequest* out) {
  nlohmann::json json;
  LLMSERVE_API_TRY(ParseJsonObject(body, &json));
  FieldReader reader(json);
  ChatCompletionRequest req;
  LLMSERVE_API_TRY(reader.OptString("model", &req.model));
  reader.Known("messages");
  LLMSERVE_API_TRY(ReadMessages(json.contains("messages") ? json["messages"] : nlohmann::json(), &req.messages));

  // max_completion_tokens supersedes the deprecated max_tokens.
  LLMSERVE_API_TRY(reader.OptInt32("max_tokens", 1, kInt32Max, &req.sampling.max_tokens));
  LLMSERVE_API_TRY(reader.OptInt32("max_completion_tokens", 1, kInt32Max, &req.sampling.max_tokens));

  bool logprobs = false;
  LLMSERVE_API_TRY(reader.Bool("logprobs", &logprobs));
  std::optional<int32_t> top_logprobs;
  LLMSERVE_API_TRY(reader.OptInt32("top_logprobs", 0, options.max_logprobs, &top_logprobs));
  if (top_logprobs && !logprobs) {
    return BadRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
  }
  if (logprobs) req.sampling.logprobs = top_logprobs.value_or(0);

  LLMSERVE_API_TRY(ReadSamplingFields(reader, options, &req.sampling));
  LLMSERVE_API_TRY(ReadStructuredOutputs(reader, body, options.structured_outputs, &req.sampling.structured_outputs));
  LLMSERVE_API_TRY(reader.Bool("add_generation_prompt", &req.add_generation_prompt));
  LLMSERVE_API_TRY(reader.Bool("continue_final_message", &req.continue_final_message));
  if (req.add_generation_prompt && req.continue_final_message) {
    return BadRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.", "continue_final_message");
  }
  if (req.continue_final_message && req.messages.back()["role"] != "assistant") {
    return BadRequest("`continue_final_message` needs the last message to be from the assistant.", "continue_final_message");
  }
  LLMSERVE_API_TRY(reader.Bool("add_special_tokens", &req.add_special_tokens));
  LLMSERVE_API_TRY(reader.Bool("echo", &req.echo));
  req.sampling.echo = req.echo;  // (beam search refuses it)
  LLMSERVE_API_TRY(reader.Object("chat_template_kwargs", &req.chat_template_kwargs));
  LLMSERVE_API_TRY(reader.OptString("chat_template", &req.chat_template));
  LLMSERVE_API_TRY(ReadTools(reader, &req.tools, &req.tool_choice));
  LLMSERVE_API_TRY(reader.Bool("parallel_tool_calls", &req.parallel_tool_calls));
  std::optional<std::string> tool_schema;
  const ToolChoiceMode tool_mode = ModeOf(req.tools, req.tool_choice);
  if (tool_mode == ToolChoiceMode::kNamed || tool_mode == ToolChoiceMode::kRequired) {
    // Read the tools again keeping key order (the reader's JSON sorts object keys).
    const auto ordered = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
    LLMSERVE_API_TRY(ToolChoiceSchema(ordered["tools"], req.tool_choice, req.parallel_tool_calls, &tool_schema));
  }
  if (tool_schema) {
    LLMSERVE_API_TRY(ConstrainToJsonSchema(*tool_schema, options.structured_outputs, "tools",
                                           &req.sampling.structured_outputs));
  }

  LLMSERVE_API_TRY(ReadBeamSearchFields(reader, options, /*stream_allowed=*/true, &req.sampling));
  LLMSERVE_API_TRY(CheckSamplingRequest(req.sampling, json));
  req.ignored_fields = reader.UnknownFields();
  *out = std::move(req);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
