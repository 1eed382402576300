#pragma once
// ChatCompletionRequest: a validated POST /v1/chat/completions body.
//
// messages: a non-empty array of {role, content, ...}; content is a string,
// null (assistant messages with tool_calls), or an array of content parts of
// which only {"type": "text", "text": ...} is supported (this server serves
// text models): text parts are joined with "\n" into one string, as vLLM does
// for string-format chat templates. Other message fields (name, tool_calls,
// tool_call_id, reasoning_content) are passed through to the chat template.
// Unknown top-level fields are accepted and listed in `ignored_fields`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/json_fields.h"
#include "frontend/openai/sampling_request.h"

namespace llmserve::frontend::openai {

struct ChatCompletionRequest {
  std::optional<std::string> model;        // unset = the default served model
  nlohmann::json messages;                 // normalized: every content is a string or null
  SamplingRequest sampling;                // max_tokens from max_completion_tokens, else max_tokens
  bool add_generation_prompt = true;       // end the rendered prompt with the assistant header
  bool continue_final_message = false;     // leave the last (assistant) message open
  bool add_special_tokens = false;         // add BOS etc. on top of the template (vLLM default false)
  bool echo = false;                       // prepend the last message's content when the reply continues its role
  nlohmann::json chat_template_kwargs;     // extra template variables (object) or null
  std::optional<std::string> chat_template;  // a template to use instead of the model's
  nlohmann::json tools;                    // array of tool definitions, or null
  nlohmann::json tool_choice;              // "none" | "auto" | "required" | {"type":"function",...}, or null
  bool parallel_tool_calls = true;
  std::vector<std::string> ignored_fields;  // unknown fields, ignored

  bool operator==(const ChatCompletionRequest&) const = default;
};

// Parses and validates a /v1/chat/completions body.
MaybeError ParseChatCompletionRequest(std::string_view body, const ParseOptions& options,
                                      ChatCompletionRequest* out);

// Validates and normalizes a "messages" array (also used by /tokenize).
MaybeError ReadMessages(const nlohmann::json& messages, nlohmann::json* out);

// Validates "tools" and "tool_choice" of `reader`'s object into `tools` / `tool_choice`.
MaybeError ReadTools(FieldReader& reader, nlohmann::json* tools, nlohmann::json* tool_choice);

}  // namespace llmserve::frontend::openai
