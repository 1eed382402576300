#include "frontend/openai/embedding_request.h"

#include <limits>

#include "frontend/openai/request_body.h"

namespace llmserve::frontend::openai {

namespace {

// Main's output-format fields: only what this server writes is accepted.
MaybeError CheckOnly(FieldReader& reader, const char* name, std::initializer_list<const char*> allowed) {
  std::optional<std::string> value;
  LLMSERVE_API_TRY(reader.OptString(name, &value));
  if (!value) return std::nullopt;
  for (const char* a : allowed)
    if (*value == a) return std::nullopt;
  return BadRequest(std::string("'") + name + "' = '" + *value + "' is not supported (only '" + *allowed.begin() +
                        "')",
                    name);
}

}  // namespace

MaybeError ParseEmbeddingRequest(std::string_view body, bool pooling_endpoint, EmbeddingRequest* out) {
  nlohmann::json json;
  LLMSERVE_API_TRY(ParseJsonObject(body, &json));
  FieldReader reader(json);
  EmbeddingRequest req;
  LLMSERVE_API_TRY(reader.OptString("model", &req.model));
  const bool chat = reader.Get("messages") != nullptr;
  if (chat && reader.Get("input") != nullptr)
    return BadRequest("Give either 'input' or 'messages', not both.", "messages");
  if (chat) {
    const nlohmann::json& messages = *reader.Get("messages");
    reader.Known("messages");
    if (!messages.is_array() || messages.empty())
      return BadRequest("'messages' must be a non-empty array", "messages");
    req.messages = messages;
    req.add_special_tokens = false;
    LLMSERVE_API_TRY(reader.Bool("add_generation_prompt", &req.add_generation_prompt));
    LLMSERVE_API_TRY(reader.Object("chat_template_kwargs", &req.chat_template_kwargs));
    LLMSERVE_API_TRY(reader.OptString("chat_template", &req.chat_template));
    bool continue_final_message = false;
    LLMSERVE_API_TRY(reader.Bool("continue_final_message", &continue_final_message));
    if (continue_final_message && req.add_generation_prompt)
      return BadRequest("continue_final_message and add_generation_prompt cannot both be true.");
  } else {
    LLMSERVE_API_TRY(ReadPrompts(reader, "input", &req.inputs));
  }
  LLMSERVE_API_TRY(reader.Bool("add_special_tokens", &req.add_special_tokens));
  std::optional<std::string> encoding;
  LLMSERVE_API_TRY(reader.OptString("encoding_format", &encoding));
  if (encoding && *encoding == "base64") {
    req.encoding = EmbeddingEncoding::kBase64;
  } else if (encoding && *encoding != "float") {
    return BadRequest("'encoding_format' must be 'float' or 'base64', got '" + *encoding + "'", "encoding_format");
  }
  LLMSERVE_API_TRY(CheckOnly(reader, "embed_dtype", {"float32"}));
  LLMSERVE_API_TRY(CheckOnly(reader, "endianness", {"native", "little"}));
  LLMSERVE_API_TRY(reader.OptInt32("dimensions", 1, kInt32Max, &req.dimensions));
  for (const char* name : {"normalize", "use_activation"}) {
    if (const nlohmann::json* v = reader.Get(name)) {
      if (!v->is_boolean()) return BadRequest(std::string("'") + name + "' must be true or false", name);
      req.normalize = v->get<bool>();
    }
    reader.Known(name);
  }
  LLMSERVE_API_TRY(reader.OptInt32("truncate_prompt_tokens", -1, kInt32Max, &req.truncate_prompt_tokens));
  if (req.truncate_prompt_tokens && *req.truncate_prompt_tokens == 0)
    return BadRequest("'truncate_prompt_tokens' must be -1 or at least 1", "truncate_prompt_tokens");
  LLMSERVE_API_TRY(reader.Int32("priority", std::numeric_limits<int32_t>::min(), kInt32Max, &req.priority));
  LLMSERVE_API_TRY(reader.OptString("request_id", &req.request_id));
  std::optional<std::string> user;  // OpenAI's end-user id: metadata only
  LLMSERVE_API_TRY(reader.OptString("user", &user));
  if (pooling_endpoint) {
    std::optional<std::string> task;
    LLMSERVE_API_TRY(reader.OptString("task", &task));
    if (task && *task != "embed")
      return BadRequest("task '" + *task + "' is not supported: this server pools with task 'embed' only", "task");
  }
  req.ignored_fields = reader.UnknownFields();
  *out = std::move(req);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
