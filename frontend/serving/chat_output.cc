#include "frontend/serving/chat_output.h"

#include "frontend/tool_parsers/json_canon.h"

namespace llmserve::frontend::serving {

using openai::ToolChoiceMode;

Status ValidateChatOutputFlags(bool enable_auto_tool_choice, const std::string& tool_call_parser,
                               const std::string& reasoning_parser) {
  if (enable_auto_tool_choice && tool_call_parser.empty())
    return Status::InvalidArgument("--enable-auto-tool-choice needs --tool-call-parser");
  if (!tool_call_parser.empty()) LLMSERVE_RETURN_IF_ERROR(tool_parsers::MakeToolParser(tool_call_parser).status());
  if (!reasoning_parser.empty()) LLMSERVE_RETURN_IF_ERROR(reasoning::MakeReasoningParser(reasoning_parser).status());
  return Status::Ok();
}

ChatOutput::ChatOutput(ChatOutputOptions options) : options_(std::move(options)) {
  if (options_.reasoning_parser) reasoning_.emplace(options_.reasoning_parser->NewStream());
  if (options_.tool_mode == ToolChoiceMode::kAuto && options_.tool_parser) tools_ = options_.tool_parser->NewStream();
}

void ChatOutput::Append(const tool_parsers::DeltaMessage& m, ChatPiece* piece) {
  if (m.content) piece->content += *m.content;
  for (const auto& d : m.tool_calls) {
    piece->tool_calls.push_back({d.index, d.id, d.name, d.arguments});
  }
}

void ChatOutput::FeedContent(std::string_view text, ChatPiece* piece) {
  if (text.empty()) return;
  switch (options_.tool_mode) {
    case ToolChoiceMode::kAuto:
      if (tools_) {
        Append(tools_->Feed(text), piece);
        tools_called_ = tools_->calls_started() > 0;
        return;
      }
      break;
    case ToolChoiceMode::kNamed:
      // The constrained text is the call's arguments, streamed as they come.
      if (!named_id_) {
        named_id_ = tool_parsers::MakeToolCallId();
        piece->tool_calls.push_back({0, named_id_, options_.named_function, std::string(text)});
      } else {
        piece->tool_calls.push_back({0, std::nullopt, std::nullopt, std::string(text)});
      }
      return;
    case ToolChoiceMode::kRequired:
      constrained_ += text;  // sent as whole calls at the end
      return;
    case ToolChoiceMode::kNone:
      break;
  }
  piece->content += text;
}

void ChatOutput::FinishContent(ChatPiece* piece) {
  if (tools_) {
    Append(tools_->Finish(), piece);
    tools_called_ = tools_->calls_started() > 0;
  }
  if (options_.tool_mode == ToolChoiceMode::kRequired) {
    int32_t index = 0;
    for (auto& call : openai::CallsFromConstrainedOutput(ToolChoiceMode::kRequired, "", constrained_)) {
      piece->tool_calls.push_back({index++, tool_parsers::MakeToolCallId(), call.name, call.arguments});
    }
    tools_called_ = index > 0;
  }
}

ChatPiece ChatOutput::Feed(std::string_view delta) {
  ChatPiece piece;
  if (!reasoning_) {
    FeedContent(delta, &piece);
    return piece;
  }
  reasoning::ReasoningSplit split = reasoning_->Feed(delta);
  piece.reasoning = std::move(split.reasoning);
  if (split.content) FeedContent(*split.content, &piece);
  return piece;
}

ChatPiece ChatOutput::Finish() {
  ChatPiece piece;
  if (reasoning_) {
    reasoning::ReasoningSplit split = reasoning_->Finish();
    piece.reasoning = std::move(split.reasoning);
    if (split.content) FeedContent(*split.content, &piece);
  }
  FinishContent(&piece);
  return piece;
}

void ChatOutput::Complete(const std::string& text, openai::ChatChoice* choice) {
  std::string content = text;
  if (options_.reasoning_parser) {
    reasoning::ReasoningSplit split = options_.reasoning_parser->Extract(text);
    choice->reasoning = std::move(split.reasoning);
    content = split.content.value_or("");
    choice->content_null = !split.content;
  }
  choice->content = content;
  switch (options_.tool_mode) {
    case ToolChoiceMode::kAuto: {
      if (!options_.tool_parser) break;
      tool_parsers::ExtractedToolCalls found = options_.tool_parser->Extract(content);
      if (!found.tools_called) break;
      tools_called_ = true;
      choice->content = found.content.value_or("");
      choice->content_null = !found.content;
      for (auto& call : found.calls) choice->tool_calls.push_back({0, call.id, call.name, call.arguments});
      break;
    }
    case ToolChoiceMode::kNamed:
    case ToolChoiceMode::kRequired: {
      // vLLM: the message content is "" and the constrained text becomes the calls.
      for (auto& call : openai::CallsFromConstrainedOutput(options_.tool_mode, options_.named_function, content)) {
        choice->tool_calls.push_back({0, tool_parsers::MakeToolCallId(), call.name, call.arguments});
      }
      choice->content.clear();
      choice->content_null = false;
      tools_called_ = options_.tool_mode == ToolChoiceMode::kRequired && !choice->tool_calls.empty();
      break;
    }
    case ToolChoiceMode::kNone:
      break;
  }
}

}  // namespace llmserve::frontend::serving
