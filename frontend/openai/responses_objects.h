#pragma once
// The Responses API's objects (POST /v1/responses): the response, its
// message item and output_text part, and the stream's events in the order
// OpenAI sends them. Text output only (one message item).

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "frontend/openai/responses.h"
#include "frontend/openai/responses_request.h"

namespace llmserve::frontend::openai {

// What a response object repeats from its request, and its ids.
struct ResponseFacts {
  std::string id;          // "resp_..."
  std::string message_id;  // "msg_..." of the output message
  int64_t created_at = 0;
  std::string model;
  ResponsesRequest request;  // instructions, max_output_tokens, sampling, metadata... echoed back
};

// The response object. `status`: in_progress, completed or incomplete (then
// incomplete_details says max_output_tokens); `text` null = no output yet.
nlohmann::json ResponseObject(const ResponseFacts& facts, const std::string& status,
                              const std::optional<std::string>& text, const std::optional<Usage>& usage);

// The output message item (status in_progress with no content while streaming).
nlohmann::json MessageItem(const ResponseFacts& facts, const std::optional<std::string>& text);

// An output_text content part.
nlohmann::json OutputTextPart(const std::string& text);

// Stream events: {"type": type, "sequence_number": n, ...fields}.
class ResponseEvents {
 public:
  explicit ResponseEvents(const ResponseFacts& facts) : facts_(facts) {}
  // response.created, response.in_progress, output_item.added, content_part.added.
  std::vector<nlohmann::json> Opening();
  // response.output_text.delta.
  nlohmann::json TextDelta(const std::string& delta);
  // output_text.done, content_part.done, output_item.done, response.completed
  // (whose response says completed or incomplete).
  std::vector<nlohmann::json> Closing(const std::string& text, const std::string& status, const Usage& usage);

 private:
  nlohmann::json Event(const char* type, nlohmann::json fields);
  nlohmann::json PartEvent(const char* type, nlohmann::json fields);

  const ResponseFacts& facts_;
  int64_t sequence_ = 0;
};

}  // namespace llmserve::frontend::openai
