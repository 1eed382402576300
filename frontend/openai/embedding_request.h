#pragma once
// EmbeddingRequest: a validated POST /v1/embeddings or POST /pooling body
// (vLLM's EmbeddingCompletionRequest / EmbeddingChatRequest and the pooling
// variants).
//
// Either `input` (a string, strings, token ids or lists of token ids: one
// embedding each) or chat `messages` (one embedding of the rendered
// conversation). Fields that would change the output and are not served
// (another encoding, dtype or endianness, a task other than embed) are a
// 400; unknown fields are listed in `ignored_fields`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/completion_request.h"
#include "frontend/openai/json_fields.h"

namespace llmserve::frontend::openai {

enum class EmbeddingEncoding { kFloat, kBase64 };

struct EmbeddingRequest {
  std::optional<std::string> model;       // unset = the default served model
  std::vector<PromptInput> inputs;        // `input`, or empty with `messages`
  nlohmann::json messages;                // chat form (an array), else null
  bool add_generation_prompt = false;     // chat form
  nlohmann::json chat_template_kwargs;    // chat form, object or null
  std::optional<std::string> chat_template;
  bool add_special_tokens = true;         // default false in the chat form, as vLLM's
  EmbeddingEncoding encoding = EmbeddingEncoding::kFloat;
  std::optional<int32_t> dimensions;      // matryoshka truncation
  std::optional<bool> normalize;          // vLLM 0.11 `normalize`, main `use_activation`; unset: the server's
  std::optional<int32_t> truncate_prompt_tokens;  // keep the last k tokens; -1: the context length
  int32_t priority = 0;
  std::optional<std::string> request_id;
  std::vector<std::string> ignored_fields;

  bool operator==(const EmbeddingRequest&) const = default;
};

// Parses a /v1/embeddings body, or with `pooling_endpoint` a /pooling body
// (which also takes `task`: embed, the only one served).
MaybeError ParseEmbeddingRequest(std::string_view body, bool pooling_endpoint, EmbeddingRequest* out);

}  // namespace llmserve::frontend::openai
