#include "frontend/openai/responses_request.h"

#include "frontend/openai/request_body.h"
#include "frontend/openai/structured_outputs_request.h"

namespace llmserve::frontend::openai {

namespace {

// One content value of an input message as text: a string, or text parts.
MaybeError ContentText(const nlohmann::json& content, const std::string& where, std::string* out) {
  if (content.is_string()) {
    *out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return BadRequest(where + ".content must be a string or an array of parts", "input");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const nlohmann::json& part = content[i];
    const std::string type = StringMember(part, "type");
    if ((type != "input_text" && type != "output_text") || !part.contains("text") || !part["text"].is_string()) {
      return BadRequest(where + ".content[" + std::to_string(i) + "]: only input_text and output_text parts are "
                        "supported (this server serves text models), got '" + type + "'", "input");
    }
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
  }
  *out = std::move(text);
  return std::nullopt;
}

MaybeError ReadInput(const nlohmann::json* input, nlohmann::json* messages) {
  if (input == nullptr) return BadRequest("'input' is required", "input");
  *messages = nlohmann::json::array();
  if (input->is_string()) {
    messages->push_back({{"role", "user"}, {"content", *input}});
    return std::nullopt;
  }
  if (!input->is_array() || input->empty()) return BadRequest("'input' must be a string or a non-empty array", "input");
  for (size_t i = 0; i < input->size(); ++i) {
    const nlohmann::json& item = (*input)[i];
    const std::string where = "input[" + std::to_string(i) + "]";
    const std::string type = !item.is_object()        ? std::string()
                             : item.contains("type") ? StringMember(item, "type")
                                                     : std::string("message");
    if (type != "message") {
      return BadRequest(where + ": items of type '" + type + "' are not supported; send messages", "input");
    }
    const std::string role = StringMember(item, "role");
    if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
      return BadRequest(where + ".role must be user, assistant, system or developer", "input");
    }
    std::string text;
    LLMSERVE_API_TRY(ContentText(item.contains("content") ? item["content"] : nlohmann::json(), where, &text));
    messages->push_back({{"role", role == "developer" ? "system" : role}, {"content", std::move(text)}});
  }
  return std::nullopt;
}

// text.format: text (none), json_object, or json_schema {name, schema, strict}.
MaybeError ReadTextFormat(FieldReader& reader, std::string_view body, const ParseOptions& options,
                          ResponsesRequest* req) {
  reader.Known("text");
  const nlohmann::json* text = reader.Get("text");
  if (text == nullptr) return std::nullopt;
  if (!text->is_object()) return BadRequest("'text' must be an object", "text");
  auto format = text->find("format");
  if (format == text->end() || format->is_null()) return std::nullopt;
  const std::string type = StringMember(*format, "type");
  req->text_format = *format;
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    req->sampling.structured_outputs.emplace().json_object = true;
    return std::nullopt;
  }
  if (type != "json_schema" || !format->contains("schema") || !(*format)["schema"].is_object()) {
    return BadRequest("text.format must be {type: text}, {type: json_object} or {type: json_schema, schema: {...}}",
                      "text.format");
  }
  // The schema keeps the client's key order (properties are emitted in it).
  const auto ordered = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  return ConstrainToJsonSchema(ordered["text"]["format"]["schema"].dump(), options.structured_outputs, "text.format",
                               &req->sampling.structured_outputs);
}

// Fields that would change the answer and this server does not do.
MaybeError RefuseUnsupported(FieldReader& reader) {
  for (const char* name : {"tools", "tool_choice", "include", "prompt"}) reader.Known(name);
  const nlohmann::json* tools = reader.Get("tools");
  if (tools && !(tools->is_array() && tools->empty())) {
    return BadRequest("tools on /v1/responses are not supported yet; use /v1/chat/completions for tool calls", "tools");
  }
  const nlohmann::json* choice = reader.Get("tool_choice");
  if (choice && !(choice->is_string() && (*choice == "none" || *choice == "auto"))) {
    return BadRequest("tool_choice needs tools, which /v1/responses does not support yet", "tool_choice");
  }
  bool background = false;
  LLMSERVE_API_TRY(reader.Bool("background", &background));
  if (background) return BadRequest("background responses are not supported", "background");
  std::optional<std::string> truncation;
  LLMSERVE_API_TRY(reader.OptString("truncation", &truncation));
  if (truncation && *truncation != "disabled") {
    return BadRequest("truncation '" + *truncation + "' is not supported (only 'disabled')", "truncation");
  }
  std::optional<int32_t> top_logprobs;
  LLMSERVE_API_TRY(reader.OptInt32("top_logprobs", 0, kInt32Max, &top_logprobs));
  if (top_logprobs.value_or(0) > 0) return BadRequest("top_logprobs is not supported on /v1/responses", "top_logprobs");
  const nlohmann::json* include = reader.Get("include");
  if (include && !(include->is_array() && include->empty())) {
    return BadRequest("'include' is not supported on /v1/responses", "include");
  }
  const nlohmann::json* prompt = reader.Get("prompt");
  if (prompt) return BadRequest("prompt templates are not supported", "prompt");
  return std::nullopt;
}

}  // namespace

MaybeError ParseResponsesRequest(std::string_view body, const ParseOptions& options, ResponsesRequest* out) {
  nlohmann::json json;
  LLMSERVE_API_TRY(ParseJsonObject(body, &json));
  FieldReader reader(json);
  ResponsesRequest req;
  LLMSERVE_API_TRY(reader.OptString("model", &req.model));
  reader.Known("input");
  LLMSERVE_API_TRY(ReadInput(reader.Get("input"), &req.input_messages));
  LLMSERVE_API_TRY(reader.OptString("instructions", &req.instructions));
  LLMSERVE_API_TRY(reader.OptString("previous_response_id", &req.previous_response_id));
  LLMSERVE_API_TRY(reader.Bool("store", &req.store));
  LLMSERVE_API_TRY(reader.Object("metadata", &req.metadata));
  LLMSERVE_API_TRY(reader.OptInt32("max_output_tokens", 1, kInt32Max, &req.sampling.max_tokens));
  LLMSERVE_API_TRY(RefuseUnsupported(reader));
  LLMSERVE_API_TRY(ReadSamplingFields(reader, options, &req.sampling));
  if (req.sampling.n != 1) return BadRequest("/v1/responses gives one output: n must be 1", "n");
  LLMSERVE_API_TRY(ReadTextFormat(reader, body, options, &req));
  // Accepted without effect on a text answer (vLLM does the same).
  for (const char* name : {"parallel_tool_calls", "max_tool_calls", "service_tier", "reasoning", "prompt_cache_key",
                           "safety_identifier"})
    reader.Known(name);
  LLMSERVE_API_TRY(CheckSamplingRequest(req.sampling, json));
  req.ignored_fields = reader.UnknownFields();
  *out = std::move(req);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
