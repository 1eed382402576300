#include "frontend/openai/tokenize_request.h"

#include <limits>

#include "frontend/openai/chat_request.h"
#include "frontend/openai/request_body.h"

namespace llmserve::frontend::openai {

MaybeError ParseTokenizeRequest(std::string_view body, TokenizeRequest* out) {
  nlohmann::json json;
  LLMSERVE_API_TRY(ParseJsonObject(body, &json));
  FieldReader reader(json);
  TokenizeRequest req;
  LLMSERVE_API_TRY(reader.OptString("model", &req.model));
  LLMSERVE_API_TRY(reader.OptString("prompt", &req.prompt));
  reader.Known("messages");
  const nlohmann::json* messages = reader.Get("messages");
  if (req.prompt && messages) return BadRequest("Send either 'prompt' or 'messages', not both.", "messages");
  if (!req.prompt && !messages) return BadRequest("Either 'prompt' or 'messages' is required.", "prompt");
  if (messages) {
    LLMSERVE_API_TRY(ReadMessages(*messages, &req.messages));
    req.add_special_tokens = false;
    LLMSERVE_API_TRY(reader.Bool("add_generation_prompt", &req.add_generation_prompt));
    LLMSERVE_API_TRY(reader.Bool("continue_final_message", &req.continue_final_message));
    if (req.add_generation_prompt && req.continue_final_message) {
      return BadRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
                        "continue_final_message");
    }
    LLMSERVE_API_TRY(reader.Object("chat_template_kwargs", &req.chat_template_kwargs));
    LLMSERVE_API_TRY(reader.OptString("chat_template", &req.chat_template));
    nlohmann::json tool_choice;
    LLMSERVE_API_TRY(ReadTools(reader, &req.tools, &tool_choice));
  }
  LLMSERVE_API_TRY(reader.Bool("add_special_tokens", &req.add_special_tokens));
  LLMSERVE_API_TRY(reader.Bool("return_token_strs", &req.return_token_strs));
  req.ignored_fields = reader.UnknownFields();
  *out = std::move(req);
  return std::nullopt;
}

MaybeError ParseDetokenizeRequest(std::string_view body, DetokenizeRequest* out) {
  nlohmann::json json;
  LLMSERVE_API_TRY(ParseJsonObject(body, &json));
  FieldReader reader(json);
  DetokenizeRequest req;
  LLMSERVE_API_TRY(reader.OptString("model", &req.model));
  if (!reader.Get("tokens")) return BadRequest("'tokens' is required", "tokens");
  LLMSERVE_API_TRY(reader.IntList("tokens", 0, std::numeric_limits<int32_t>::max(), &req.tokens));
  req.ignored_fields = reader.UnknownFields();
  *out = std::move(req);
  return std::nullopt;
}

nlohmann::json TokenizeResponse(const std::vector<int32_t>& tokens, int32_t max_model_len,
                                const std::optional<std::vector<std::string>>& token_strs) {
  return {{"count", tokens.size()},
          {"max_model_len", max_model_len},
          {"tokens", tokens},
          {"token_strs", token_strs ? nlohmann::json(*token_strs) : nlohmann::json(nullptr)}};
}

nlohmann::json DetokenizeResponse(const std::string& text) { return {{"prompt", text}}; }

}  // namespace llmserve::frontend::openai
