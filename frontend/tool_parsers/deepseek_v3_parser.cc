// deepseek_v3 (DeepSeek V3 / R1-0528): content, then
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//   ```json
//   {...}
//   ```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
// As in vLLM the arguments are the model's text, passed on unchanged.

#include <string>
#include <string_view>

#include "frontend/tool_parsers/parser_util.h"

namespace llmserve::frontend::tool_parsers {
namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kFenceOpen = "\n```json\n";
constexpr std::string_view kFenceClose = "\n```";

// One call's body, read as far as it has arrived.
struct Body {
  bool bad = false;                 // cannot become a call
  std::optional<std::string> name;  // once its line is complete
  bool args_started = false;        // the opening fence is complete
  bool args_closed = false;         // the closing fence was read
  std::string_view args;            // without a partial closing fence
};

Body ReadBody(std::string_view body) {
  Body b;
  size_t sep = body.find(kSep);
  if (sep == std::string_view::npos) {
    std::string head = "function" + std::string(kSep);  // what must come first
    b.bad = body.size() > head.size() || head.compare(0, body.size(), body) != 0;
    return b;
  }
  if (body.substr(0, sep) != "function") return b.bad = true, b;
  std::string_view after = body.substr(sep + kSep.size());
  size_t nl = after.find('\n');
  if (nl == std::string_view::npos) return b;
  b.name = std::string(after.substr(0, nl));
  std::string_view rest = after.substr(nl);
  if (rest.size() < kFenceOpen.size()) {
    b.bad = rest != kFenceOpen.substr(0, rest.size());
    return b;
  }
  if (rest.substr(0, kFenceOpen.size()) != kFenceOpen) return b.bad = true, b;
  b.args_started = true;
  std::string_view args = rest.substr(kFenceOpen.size());
  size_t close = args.find(kFenceClose);
  b.args_closed = close != std::string_view::npos;
  b.args = b.args_closed ? args.substr(0, close)
                         : args.substr(0, args.size() - PartialTagOverlap(args, kFenceClose));
  return b;
}

class DeepSeekV3Stream : public StreamBase {
 public:
  DeltaMessage Feed(std::string_view delta) override {
    text_.append(delta);
    DeltaMessage out;
    if (!blocks_) {
      size_t begin = text_.find(kCallsBegin);
      if (begin == std::string::npos) {
        SendContent(text_.size() - PartialTagOverlap(text_, kCallsBegin), &out);
        return out;
      }
      SendContent(begin, &out);
      blocks_.emplace(kCallBegin, kCallEnd, begin + kCallsBegin.size());
    }
    blocks_->Update(text_);
    const auto& blocks = blocks_->blocks();
    for (size_t i = 0; i < blocks.size(); ++i) {
      Body body = ReadBody(std::string_view(text_).substr(blocks[i].begin, blocks[i].end - blocks[i].begin));
      if (body.bad || !SendCall(i, body.name, body.args, &out)) break;
    }
    return out;
  }

  DeltaMessage Finish() override { return FinishContent(); }

 private:
  std::optional<TagBlocks> blocks_;  // once the calls have begun
};

class DeepSeekV3Parser : public ToolParser {
 public:
  std::string_view name() const override { return "deepseek_v3"; }

  ExtractedToolCalls Extract(std::string_view text) const override {
    size_t begin = text.find(kCallsBegin);
    if (begin == std::string_view::npos) return NoCalls(text);
    TagBlocks blocks(kCallBegin, kCallEnd, begin + kCallsBegin.size());
    blocks.Update(text);
    if (blocks.blocks().empty()) return NoCalls(text);
    ExtractedToolCalls result;
    for (const TagBlocks::Block& block : blocks.blocks()) {
      Body body = ReadBody(text.substr(block.begin, block.end - block.begin));
      if (body.bad || !body.args_started || (block.closed && !body.args_closed)) return NoCalls(text);
      result.calls.push_back({MakeToolCallId(), *body.name, std::string(body.args)});
    }
    result.tools_called = true;
    result.content = NonEmpty(text.substr(0, begin));
    return result;
  }

  std::unique_ptr<ToolCallStream> NewStream() const override {
    return std::make_unique<DeepSeekV3Stream>();
  }

  bool NeedsSpecialTokens() const override { return false; }
};

}  // namespace

std::unique_ptr<ToolParser> NewDeepSeekV3Parser() { return std::make_unique<DeepSeekV3Parser>(); }

}  // namespace llmserve::frontend::tool_parsers
