#pragma once
// Pieces the tool parsers share: tag search that survives text arriving in
// pieces, and StreamBase, the bookkeeping of what a stream has sent.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/tool_parsers/call_scanner.h"
#include "frontend/tool_parsers/tool_parser.h"

namespace llmserve::frontend::tool_parsers {

// The length of the longest suffix of `text` that is a proper prefix of `tag`
// (the part of a tag that may still be arriving).
size_t PartialTagOverlap(std::string_view text, std::string_view tag);

// `text` when not empty, else nullopt.
std::optional<std::string> NonEmpty(std::string_view text);

// The result for an output without (usable) calls: all of it is content.
ExtractedToolCalls NoCalls(std::string_view text);

// The regions between `open` and `close` tags, found incrementally as text
// grows. A region without its close tag runs to the end of the text. Search
// starts at `from` (set before the first Update).
class TagBlocks {
 public:
  struct Block {
    size_t begin = 0;  // just after the open tag
    size_t end = 0;    // at the close tag, or the end of the text
    bool closed = false;
  };

  TagBlocks(std::string_view open, std::string_view close, size_t from = 0)
      : open_(open), close_(close), pos_(from) {}
  // Re-reads `text`, which must extend the text of the previous call.
  void Update(std::string_view text);
  // The regions found so far.
  const std::vector<Block>& blocks() const { return blocks_; }

 private:
  std::string_view open_, close_;
  size_t pos_;       // where to look for the next open tag
  size_t searched_ = 0;  // the open region has no close tag before this
  std::vector<Block> blocks_;
};

// What a stream has sent: content up to an offset, and per call whether its
// header went out and how much argument text.
class StreamBase : public ToolCallStream {
 public:
  using IdMaker = std::string (*)();
  explicit StreamBase(IdMaker make_id = &MakeToolCallId) : make_id_(make_id) {}
  int calls_started() const override;

 protected:
  // Sends text_[sent, end) as content.
  void SendContent(size_t end, DeltaMessage* out);
  // Sends what is new for call `index`: its header once `name` is known,
  // then argument text past what was sent. False while the name is unknown.
  bool SendCall(size_t index, const std::optional<std::string>& name, std::string_view args,
                DeltaMessage* out);
  // Feeds new bytes of the call lists' region [begin, end) into `scanner`.
  void FeedScanner(size_t begin, size_t end, CallListScanner* scanner);
  // Sends the calls `scanner` has read (stops at the first without a name).
  void SendScannedCalls(const CallListScanner& scanner, DeltaMessage* out);
  // End of output: with no call started, all unsent text is content.
  DeltaMessage FinishContent();

  std::string text_;  // the output so far

 private:
  struct Sent {
    bool header = false;
    size_t args = 0;
  };
  IdMaker make_id_;
  size_t content_sent_ = 0;
  size_t scanner_fed_ = 0;  // for FeedScanner: offset of the next unfed byte
  std::vector<Sent> sent_;
};

// The calls of a complete CallListScanner (see CallListScanner::Complete).
std::vector<ToolCall> CallsFrom(const CallListScanner& scanner, StreamBase::IdMaker make_id);

// The four parsers.
std::unique_ptr<ToolParser> NewHermesParser();
std::unique_ptr<ToolParser> NewLlama3JsonParser();
std::unique_ptr<ToolParser> NewMistralParser();
std::unique_ptr<ToolParser> NewDeepSeekV3Parser();

}  // namespace llmserve::frontend::tool_parsers
