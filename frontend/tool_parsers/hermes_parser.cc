// hermes (Qwen2.5, Qwen3, Hermes 2 Pro): calls are
//   <tool_call>{"name": "f", "arguments": {...}}</tool_call>
// possibly several; the last may lack its close tag. Content is the text
// before the first <tool_call>; text between and after calls is dropped.

#include <string_view>

#include "frontend/tool_parsers/parser_util.h"

namespace llmserve::frontend::tool_parsers {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

bool OnlyWhitespace(std::string_view text) {
  return text.find_first_not_of(" \t\n\r") == std::string_view::npos;
}

class HermesStream : public StreamBase {
 public:
  DeltaMessage Feed(std::string_view delta) override {
    text_.append(delta);
    DeltaMessage out;
    blocks_.Update(text_);
    const auto& blocks = blocks_.blocks();
    if (blocks.empty()) {
      SendContent(text_.size() - PartialTagOverlap(text_, kOpen), &out);
      return out;
    }
    SendContent(blocks[0].begin - kOpen.size(), &out);
    for (size_t i = 0; i < blocks.size(); ++i) {
      if (i == calls_.size()) {
        calls_.emplace_back(std::vector<std::string_view>{"arguments"});
        fed_.push_back(blocks[i].begin);
      }
      if (blocks[i].end > fed_[i]) {
        calls_[i].Feed(std::string_view(text_).substr(fed_[i], blocks[i].end - fed_[i]));
        fed_[i] = blocks[i].end;
      }
      if (calls_[i].failed() || !SendCall(i, calls_[i].name(), calls_[i].arguments(), &out)) break;
    }
    return out;
  }

  DeltaMessage Finish() override { return FinishContent(); }

 private:
  TagBlocks blocks_{kOpen, kClose};
  std::vector<CallObjectScanner> calls_;
  std::vector<size_t> fed_;  // text offset up to which each call was fed
};

class HermesParser : public ToolParser {
 public:
  std::string_view name() const override { return "hermes"; }

  ExtractedToolCalls Extract(std::string_view text) const override {
    TagBlocks blocks(kOpen, kClose);
    blocks.Update(text);
    if (blocks.blocks().empty()) return NoCalls(text);
    ExtractedToolCalls result;
    for (const TagBlocks::Block& b : blocks.blocks()) {
      std::string_view body = text.substr(b.begin, b.end - b.begin);
      if (!b.closed) body.remove_suffix(PartialTagOverlap(body, kClose));
      CallObjectScanner call({"arguments"});
      size_t used = call.Feed(body);
      if (!call.valid_call() || !OnlyWhitespace(body.substr(used))) return NoCalls(text);
      result.calls.push_back({MakeToolCallId(), *call.name(), std::string(call.arguments())});
    }
    result.tools_called = true;
    result.content = NonEmpty(text.substr(0, blocks.blocks()[0].begin - kOpen.size()));
    return result;
  }

  std::unique_ptr<ToolCallStream> NewStream() const override {
    return std::make_unique<HermesStream>();
  }

  bool NeedsSpecialTokens() const override { return true; }
};

}  // namespace

std::unique_ptr<ToolParser> NewHermesParser() { return std::make_unique<HermesParser>(); }

}  // namespace llmserve::frontend::tool_parsers
