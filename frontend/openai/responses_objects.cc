#include "frontend/openai/responses_objects.h"

namespace llmserve::frontend::openai {

namespace {

template <class T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json ResponsesUsage(const Usage& usage) {
  return {{"input_tokens", usage.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", usage.cached_tokens.value_or(0)}}},
          {"output_tokens", usage.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

}  // namespace

nlohmann::json OutputTextPart(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", nlohmann::json::array()}};
}

nlohmann::json MessageItem(const ResponseFacts& facts, const std::optional<std::string>& text) {
  nlohmann::json content = nlohmann::json::array();
  if (text) content.push_back(OutputTextPart(*text));
  return {{"type", "message"},
          {"id", facts.message_id},
          {"status", text ? "completed" : "in_progress"},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

nlohmann::json ResponseObject(const ResponseFacts& facts, const std::string& status,
                              const std::optional<std::string>& text, const std::optional<Usage>& usage) {
  const ResponsesRequest& r = facts.request;
  nlohmann::json output = nlohmann::json::array();
  if (text) output.push_back(MessageItem(facts, text));
  nlohmann::json format = r.text_format.is_null() ? nlohmann::json{{"type", "text"}} : r.text_format;
  return {{"id", facts.id},
          {"object", "response"},
          {"created_at", facts.created_at},
          {"status", status},
          {"error", nullptr},
          {"incomplete_details",
           status == "incomplete" ? nlohmann::json{{"reason", "max_output_tokens"}} : nlohmann::json()},
          {"instructions", OrNull(r.instructions)},
          {"max_output_tokens", OrNull(r.sampling.max_tokens)},
          {"model", facts.model},
          {"output", std::move(output)},
          {"parallel_tool_calls", true},
          {"previous_response_id", OrNull(r.previous_response_id)},
          {"reasoning", nullptr},
          {"store", r.store},
          {"temperature", OrNull(r.sampling.temperature)},
          {"text", {{"format", std::move(format)}}},
          {"tool_choice", "none"},
          {"tools", nlohmann::json::array()},
          {"top_p", OrNull(r.sampling.top_p)},
          {"truncation", "disabled"},
          {"usage", usage ? ResponsesUsage(*usage) : nlohmann::json()},
          {"user", r.sampling.user.empty() ? nlohmann::json() : nlohmann::json(r.sampling.user)},
          {"metadata", r.metadata.is_null() ? nlohmann::json::object() : r.metadata}};
}

nlohmann::json ResponseEvents::Event(const char* type, nlohmann::json fields) {
  fields["type"] = type;
  fields["sequence_number"] = sequence_++;
  return fields;
}

nlohmann::json ResponseEvents::PartEvent(const char* type, nlohmann::json fields) {
  fields["item_id"] = facts_.message_id;
  fields["output_index"] = 0;
  fields["content_index"] = 0;
  return Event(type, std::move(fields));
}

std::vector<nlohmann::json> ResponseEvents::Opening() {
  nlohmann::json response = ResponseObject(facts_, "in_progress", std::nullopt, std::nullopt);
  return {Event("response.created", {{"response", response}}),
          Event("response.in_progress", {{"response", response}}),
          Event("response.output_item.added", {{"output_index", 0}, {"item", MessageItem(facts_, std::nullopt)}}),
          PartEvent("response.content_part.added", {{"part", OutputTextPart("")}})};
}

nlohmann::json ResponseEvents::TextDelta(const std::string& delta) {
  return PartEvent("response.output_text.delta", {{"delta", delta}, {"logprobs", nlohmann::json::array()}});
}

std::vector<nlohmann::json> ResponseEvents::Closing(const std::string& text, const std::string& status,
                                                    const Usage& usage) {
  return {PartEvent("response.output_text.done", {{"text", text}, {"logprobs", nlohmann::json::array()}}),
          PartEvent("response.content_part.done", {{"part", OutputTextPart(text)}}),
          Event("response.output_item.done", {{"output_index", 0}, {"item", MessageItem(facts_, text)}}),
          Event("response.completed", {{"response", ResponseObject(facts_, status, text, usage)}})};
}

}  // namespace llmserve::frontend::openai
