#pragma once
// ChatOutput: how one chat choice's generated text becomes the assistant
// message: reasoning (--reasoning-parser), tool calls (tool_choice required
// or named, enforced by a JSON-schema constraint; auto, found by the
// --tool-call-parser) and content. Streaming feeds it each text delta and
// sends the pieces it returns; a non-streamed answer asks for the whole
// message at the end. Both give the same message.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "frontend/openai/responses.h"
#include "frontend/openai/tool_choice.h"
#include "frontend/reasoning/reasoning_parser.h"
#include "frontend/tool_parsers/tool_parser.h"

namespace llmserve::frontend::serving {

struct ChatOutputOptions {
  openai::ToolChoiceMode tool_mode = openai::ToolChoiceMode::kNone;
  std::string named_function;                             // with kNamed
  const tool_parsers::ToolParser* tool_parser = nullptr;  // with kAuto (--enable-auto-tool-choice)
  std::shared_ptr<const reasoning::ReasoningParser> reasoning_parser;  // null: no reasoning split

  // Whether a choice needs a ChatOutput at all.
  bool active() const {
    return reasoning_parser || tool_mode == openai::ToolChoiceMode::kNamed ||
           tool_mode == openai::ToolChoiceMode::kRequired ||
           (tool_mode == openai::ToolChoiceMode::kAuto && tool_parser != nullptr);
  }
};

// What one streaming step sends (content, reasoning, tool-call pieces).
struct ChatPiece {
  std::string content;
  std::optional<std::string> reasoning;
  std::vector<openai::ChatToolCall> tool_calls;

  bool empty() const { return content.empty() && !reasoning && tool_calls.empty(); }
};

// Checks --enable-auto-tool-choice, --tool-call-parser and --reasoning-parser
// together (the launcher and the frontend both do, so a bad value stops
// `llmserve serve` before anything starts).
Status ValidateChatOutputFlags(bool enable_auto_tool_choice, const std::string& tool_call_parser,
                               const std::string& reasoning_parser);

class ChatOutput {
 public:
  explicit ChatOutput(ChatOutputOptions options);

  // Streaming: the pieces to send for the next `delta` of text.
  ChatPiece Feed(std::string_view delta);
  // Streaming: the output ended; what was held back.
  ChatPiece Finish();
  // Not streaming: the message for the whole `text` (content, content_null,
  // reasoning and tool_calls of `*choice` are set).
  void Complete(const std::string& text, openai::ChatChoice* choice);
  // Whether the choice called tools (finish_reason "tool_calls" instead of "stop").
  bool tools_called() const { return tools_called_; }

 private:
  // The tool-call stage of streaming, fed the content the reasoning stage passes.
  void FeedContent(std::string_view text, ChatPiece* piece);
  void FinishContent(ChatPiece* piece);
  static void Append(const tool_parsers::DeltaMessage& m, ChatPiece* piece);

  ChatOutputOptions options_;
  std::optional<reasoning::ReasoningStream> reasoning_;
  std::unique_ptr<tool_parsers::ToolCallStream> tools_;  // kAuto
  std::string constrained_;                              // kRequired: the text so far
  std::optional<std::string> named_id_;                  // kNamed: the call's id once sent
  bool tools_called_ = false;
};

}  // namespace llmserve::frontend::serving
