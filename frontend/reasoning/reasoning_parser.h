#pragma once
// Reasoning parsers (--reasoning-parser NAME), as in vLLM main: they split a
// model's output into reasoning (inside <think>...</think>) and content,
// either for the whole text (Extract) or as it streams (ReasoningStream).
//
//   deepseek_r1  <think> optional; text before </think> is reasoning; with no
//                </think> everything is reasoning.
//   qwen3        the same when enable_thinking (the default); <tool_call>
//                also ends reasoning. With enable_thinking=false and no
//                </think>, everything is content.
//
// The first <think> before the end of reasoning is dropped (text before it
// stays reasoning). With prompt_is_reasoning_end (the prompt already closed
// the think block) everything is content.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status_or.h"

namespace llmserve::frontend::reasoning {

// Per-request settings, fixed when the parser is made.
struct ReasoningOptions {
  bool enable_thinking = true;           // chat_template_kwargs.enable_thinking
  bool prompt_is_reasoning_end = false;  // the prompt ends after </think>
};

// A whole output split, or one streaming step; nullopt where there is none.
struct ReasoningSplit {
  std::optional<std::string> reasoning;
  std::optional<std::string> content;

  // Nothing to send.
  bool empty() const { return !reasoning && !content; }
};

// The streaming splitter of one choice.
class ReasoningStream {
 public:
  // Adds `delta`; returns what can be sent now. A suffix that may be the start
  // of a tag is held back.
  ReasoningSplit Feed(std::string_view delta);
  // The output ended: returns what was held back.
  ReasoningSplit Finish();
  // Reasoning is over: later text is content (structured output may start).
  bool reasoning_ended() const { return ended_; }

 private:
  friend class ReasoningParser;
  enum class End { kNone, kCloseTag, kImplicit };
  ReasoningStream(bool all_content, std::string_view implicit_end)
      : ended_(all_content), implicit_end_(implicit_end) {}
  void Route(std::string_view text, bool to_content, ReasoningSplit* out);

  bool ended_;
  End end_ = End::kNone;
  bool start_dropped_ = false;
  std::string_view implicit_end_;  // empty: none
  std::string pending_;            // reasoning text held back
};

class ReasoningParser {
 public:
  // The --reasoning-parser name.
  std::string_view name() const { return name_; }
  // The text that ends reasoning ("</think>"), for the engine's structured
  // output to start after.
  static constexpr std::string_view end_tag() { return "</think>"; }
  // The text that starts reasoning ("<think>").
  static constexpr std::string_view start_tag() { return "<think>"; }
  // Splits a whole output.
  ReasoningSplit Extract(std::string_view model_output) const;
  // A fresh streaming splitter for one choice.
  ReasoningStream NewStream() const;

  // Made by MakeReasoningParser: `no_end_is_reasoning` says whether an output
  // without an end is all reasoning; `implicit_end` is a tag that also ends it.
  ReasoningParser(std::string name, ReasoningOptions options, bool no_end_is_reasoning,
                  std::string_view implicit_end)
      : name_(std::move(name)), options_(options),
        no_end_is_reasoning_(no_end_is_reasoning), implicit_end_(implicit_end) {}

 private:
  std::string name_;
  ReasoningOptions options_;
  bool no_end_is_reasoning_;       // output without an end is all reasoning
  std::string_view implicit_end_;  // a tag that also ends reasoning ("" for none)
};

// The parser called `name` for one request, or InvalidArgument naming the known ones.
StatusOr<std::unique_ptr<ReasoningParser>> MakeReasoningParser(std::string_view name,
                                                               ReasoningOptions options = {});

// The known parser names, sorted, for --help and error messages.
const std::vector<std::string>& ReasoningParserNames();

}  // namespace llmserve::frontend::reasoning
