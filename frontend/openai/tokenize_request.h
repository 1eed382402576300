#pragma once
// POST /tokenize and POST /detokenize in vLLM's shapes.
//   tokenize:   {model?, prompt: str, add_special_tokens=true, return_token_strs=false}
//            or {model?, messages, add_generation_prompt=true, continue_final_message=false,
//                add_special_tokens=false, chat_template_kwargs, chat_template, tools, return_token_strs}
//            -> {count, max_model_len, tokens, token_strs}
//   detokenize: {model?, tokens: [int]} -> {prompt}

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/json_fields.h"

namespace llmserve::frontend::openai {

struct TokenizeRequest {
  std::optional<std::string> model;
  std::optional<std::string> prompt;       // set for the completion form
  nlohmann::json messages;                 // set (normalized) for the chat form, else null
  bool add_special_tokens = true;          // default true for prompt, false for messages
  bool add_generation_prompt = true;       // chat form only
  bool continue_final_message = false;     // chat form only
  nlohmann::json chat_template_kwargs;     // chat form only: object or null
  std::optional<std::string> chat_template;
  nlohmann::json tools;                    // chat form only: array or null
  bool return_token_strs = false;          // also return each token's text
  std::vector<std::string> ignored_fields;

  bool operator==(const TokenizeRequest&) const = default;
};

struct DetokenizeRequest {
  std::optional<std::string> model;
  std::vector<int32_t> tokens;
  std::vector<std::string> ignored_fields;

  bool operator==(const DetokenizeRequest&) const = default;
};

// Parses a /tokenize body: exactly one of "prompt" and "messages".
MaybeError ParseTokenizeRequest(std::string_view body, TokenizeRequest* out);

// Parses a /detokenize body.
MaybeError ParseDetokenizeRequest(std::string_view body, DetokenizeRequest* out);

// {"count", "max_model_len", "tokens", "token_strs"} (token_strs null unless given).
nlohmann::json TokenizeResponse(const std::vector<int32_t>& tokens, int32_t max_model_len,
                                const std::optional<std::vector<std::string>>& token_strs);

// {"prompt": text}.
nlohmann::json DetokenizeResponse(const std::string& text);

}  // namespace llmserve::frontend::openai
