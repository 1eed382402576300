#pragma once
// ResponsesRequest: a validated POST /v1/responses body (OpenAI's Responses
// API, text in and text out, as vLLM serves it for chat models).
//
// `input` is a string (one user message) or an array of messages
// ({"role", "content"} or {"type": "message", ...}) whose content is a string
// or parts of type input_text / output_text. `instructions` becomes a leading
// system message. `text.format` json_schema / json_object constrains the
// output. Tools, function-call items, images, background mode, truncation
// "auto" and top_logprobs are 400s: they would change the answer's meaning.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/json_fields.h"
#include "frontend/openai/sampling_request.h"

namespace llmserve::frontend::openai {

struct ResponsesRequest {
  std::optional<std::string> model;                 // unset = the default served model
  nlohmann::json input_messages;                    // the input as chat messages (instructions not included)
  std::optional<std::string> instructions;          // a system message before everything
  std::optional<std::string> previous_response_id;  // continue a stored conversation
  bool store = true;                                // keep the response for previous_response_id
  nlohmann::json metadata;                          // echoed back (object or null)
  nlohmann::json text_format;                       // text.format as given, or null
  SamplingRequest sampling;                         // max_tokens from max_output_tokens
  std::vector<std::string> ignored_fields;          // unknown fields, ignored
};

// Parses and validates a /v1/responses body.
MaybeError ParseResponsesRequest(std::string_view body, const ParseOptions& options, ResponsesRequest* out);

}  // namespace llmserve::frontend::openai
