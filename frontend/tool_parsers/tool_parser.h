#pragma once
// Tool-call parsers (--tool-call-parser NAME), as in vLLM: they find the
// function calls a model wrote in its output text, either in the whole text
// (Extract) or as it streams (ToolCallStream). Text in, structured out: the
// OpenAI wire shapes are built by the caller. See README.md in this folder.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status_or.h"

namespace llmserve::frontend::tool_parsers {

// One call in a finished output. Its type is always "function".
struct ToolCall {
  std::string id;         // "chatcmpl-tool-<32 hex>" (mistral: 9 alphanumerics)
  std::string name;
  std::string arguments;  // a JSON text, as Python's json.dumps(..., ensure_ascii=False)
};

// What Extract found: the calls and the text around them.
struct ExtractedToolCalls {
  bool tools_called = false;
  std::vector<ToolCall> calls;
  std::optional<std::string> content;  // nullopt when there is none
};

// One piece of a streamed call. The first piece of call `index` carries id,
// type ("function") and name; later pieces carry argument text.
struct DeltaToolCall {
  int index = 0;
  std::optional<std::string> id;
  std::optional<std::string> type;
  std::optional<std::string> name;
  std::optional<std::string> arguments;
};

// What one streaming step yields (vLLM's DeltaMessage, less role and reasoning).
struct DeltaMessage {
  std::optional<std::string> content;
  std::vector<DeltaToolCall> tool_calls;

  // Nothing to send.
  bool empty() const { return !content && tool_calls.empty(); }
};

// The streaming parser of one choice: feed it each new piece of output text.
// Concatenating all pieces gives the same content, names and arguments as
// Extract on the whole text whenever Extract finds calls. When no call was
// started, Finish sends the rest of the text, so all of it ends up content.
// (A call that turns out malformed after its name was sent cannot be taken
// back: Extract then says content, the stream has sent a call.)
class ToolCallStream {
 public:
  virtual ~ToolCallStream() = default;
  // Adds `delta` to the text and returns what can be sent now. A suffix that
  // may be the start of a tool-call tag is held back.
  virtual DeltaMessage Feed(std::string_view delta) = 0;
  // The output ended: returns held-back content and unsent argument text.
  virtual DeltaMessage Finish() = 0;
  // How many calls have been started (finish_reason "tool_calls" when > 0).
  virtual int calls_started() const = 0;
};

class ToolParser {
 public:
  virtual ~ToolParser() = default;
  // The --tool-call-parser name.
  virtual std::string_view name() const = 0;
  // Finds the calls in a whole output; malformed calls leave all text as content.
  virtual ExtractedToolCalls Extract(std::string_view model_output) const = 0;
  // A fresh streaming parser for one choice.
  virtual std::unique_ptr<ToolCallStream> NewStream() const = 0;
  // Whether requests with tools (and tool_choice not "none") must decode with
  // skip_special_tokens=false, because the call tags are special tokens
  // (vLLM's adjust_request).
  virtual bool NeedsSpecialTokens() const = 0;
};

// The parser called `name`, or InvalidArgument naming the known parsers.
StatusOr<std::unique_ptr<ToolParser>> MakeToolParser(std::string_view name);

// The known parser names, sorted, for --help and error messages.
const std::vector<std::string>& ToolParserNames();

// A new OpenAI-style call id: "chatcmpl-tool-" and 32 random hex digits.
std::string MakeToolCallId();

// A new Mistral call id: 9 random letters and digits.
std::string MakeMistralToolCallId();

}  // namespace llmserve::frontend::tool_parsers
