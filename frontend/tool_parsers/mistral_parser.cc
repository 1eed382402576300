// mistral (Mistral 7B v0.3 style, HF tokenizer): content, then [TOOL_CALLS]
// and a JSON array [{"name": "f", "arguments": {...}}, ...]. Call ids are 9
// letters and digits, as Mistral's chat template requires.

#include <string_view>

#include "frontend/tool_parsers/parser_util.h"

namespace llmserve::frontend::tool_parsers {
namespace {

constexpr std::string_view kToolCallsTag = "[TOOL_CALLS]";

std::vector<std::string_view> MistralArgKeys() { return {"arguments"}; }

class MistralStream : public StreamBase {
 public:
  MistralStream() : StreamBase(&MakeMistralToolCallId) {}

  DeltaMessage Feed(std::string_view delta) override {
    text_.append(delta);
    DeltaMessage out;
    size_t tag = text_.find(kToolCallsTag);
    if (tag == std::string::npos) {
      SendContent(text_.size() - PartialTagOverlap(text_, kToolCallsTag), &out);
      return out;
    }
    SendContent(tag, &out);
    FeedScanner(tag + kToolCallsTag.size(), text_.size(), &scanner_);
    SendScannedCalls(scanner_, &out);
    return out;
  }

  DeltaMessage Finish() override { return FinishContent(); }

 private:
  CallListScanner scanner_{ListForm::kArray, MistralArgKeys()};
};

class MistralParser : public ToolParser {
 public:
  std::string_view name() const override { return "mistral"; }

  ExtractedToolCalls Extract(std::string_view text) const override {
    size_t tag = text.find(kToolCallsTag);
    if (tag == std::string_view::npos) return NoCalls(text);
    std::string_view rest = text.substr(tag + kToolCallsTag.size());
    if (rest.find(kToolCallsTag) != std::string_view::npos) return NoCalls(text);  // one tag only
    CallListScanner scanner(ListForm::kArray, MistralArgKeys());
    scanner.Feed(rest);
    if (!scanner.Complete()) return NoCalls(text);
    ExtractedToolCalls result;
    result.tools_called = true;
    result.calls = CallsFrom(scanner, &MakeMistralToolCallId);
    result.content = NonEmpty(text.substr(0, tag));
    return result;
  }

  std::unique_ptr<ToolCallStream> NewStream() const override {
    return std::make_unique<MistralStream>();
  }

  bool NeedsSpecialTokens() const override { return true; }
};

}  // namespace

std::unique_ptr<ToolParser> NewMistralParser() { return std::make_unique<MistralParser>(); }

}  // namespace llmserve::frontend::tool_parsers
