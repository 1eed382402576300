// llama3_json (Llama 3.1/3.2/4 JSON tool calling): an optional <|python_tag|>,
// then one or more {"name": "f", "parameters" (or "arguments"): {...}}
// objects separated by ';'. Output starting with '{' is read as calls from
// its first byte; otherwise calls start after <|python_tag|> and the text
// before the tag is content.

#include <string_view>

#include "frontend/tool_parsers/parser_util.h"

namespace llmserve::frontend::tool_parsers {
namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kWs = " \t\n\r";

std::vector<std::string_view> Llama3ArgKeys() { return {"arguments", "parameters"}; }

class Llama3JsonStream : public StreamBase {
 public:
  DeltaMessage Feed(std::string_view delta) override {
    text_.append(delta);
    DeltaMessage out;
    if (!region_) Decide(&out);
    if (region_) {
      FeedScanner(*region_, text_.size(), &scanner_);
      SendScannedCalls(scanner_, &out);
    }
    return out;
  }

  DeltaMessage Finish() override { return FinishContent(); }

 private:
  // Finds where the calls start, sending the content before them.
  void Decide(DeltaMessage* out) {
    size_t first = text_.find_first_not_of(kWs);
    if (first == std::string::npos) return;  // only whitespace so far
    if (!text_mode_ && text_[first] == '{') {
      region_ = 0;
      return;
    }
    text_mode_ = true;
    size_t tag = text_.find(kPythonTag);
    if (tag == std::string::npos) {
      SendContent(text_.size() - PartialTagOverlap(text_, kPythonTag), out);
      return;
    }
    SendContent(tag, out);
    region_ = tag + kPythonTag.size();
  }

  bool text_mode_ = false;
  std::optional<size_t> region_;  // where the calls start, once known
  CallListScanner scanner_{ListForm::kSemicolons, Llama3ArgKeys()};
};

class Llama3JsonParser : public ToolParser {
 public:
  std::string_view name() const override { return "llama3_json"; }

  ExtractedToolCalls Extract(std::string_view text) const override {
    size_t first = text.find_first_not_of(kWs);
    if (first == std::string_view::npos) return NoCalls(text);
    size_t content_end = 0, region = 0;
    if (text[first] != '{') {
      size_t tag = text.find(kPythonTag);
      if (tag == std::string_view::npos) return NoCalls(text);
      content_end = tag;
      region = tag + kPythonTag.size();
    }
    CallListScanner scanner(ListForm::kSemicolons, Llama3ArgKeys());
    scanner.Feed(text.substr(region));
    if (!scanner.Complete()) return NoCalls(text);
    ExtractedToolCalls result;
    result.tools_called = true;
    result.calls = CallsFrom(scanner, &MakeToolCallId);
    result.content = NonEmpty(text.substr(0, content_end));
    return result;
  }

  std::unique_ptr<ToolCallStream> NewStream() const override {
    return std::make_unique<Llama3JsonStream>();
  }

  bool NeedsSpecialTokens() const override { return false; }
};

}  // namespace

std::unique_ptr<ToolParser> NewLlama3JsonParser() { return std::make_unique<Llama3JsonParser>(); }

}  // namespace llmserve::frontend::tool_parsers
