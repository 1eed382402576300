#include "frontend/tool_parsers/parser_util.h"

#include <algorithm>

namespace llmserve::frontend::tool_parsers {

size_t PartialTagOverlap(std::string_view text, std::string_view tag) {
  size_t max = std::min(text.size(), tag.size() - 1);
  for (size_t n = max; n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

std::optional<std::string> NonEmpty(std::string_view text) {
  if (text.empty()) return std::nullopt;
  return std::string(text);
}

ExtractedToolCalls NoCalls(std::string_view text) {
  ExtractedToolCalls result;
  result.content = NonEmpty(text);
  return result;
}

namespace {
// Where a later search for `tag` in a longer text must start: a match cannot
// end before the current end of `text`.
size_t Back(std::string_view text, std::string_view tag) {
  return text.size() >= tag.size() ? text.size() - tag.size() + 1 : 0;
}
}  // namespace

void TagBlocks::Update(std::string_view text) {
  while (true) {
    if (!blocks_.empty() && !blocks_.back().closed) {
      Block& open = blocks_.back();
      size_t from = std::max(open.begin, searched_);
      size_t end = text.find(close_, from);
      if (end == std::string_view::npos) {
        open.end = text.size();
        searched_ = std::max(open.begin, Back(text, close_));
        return;
      }
      open.end = end;
      open.closed = true;
      pos_ = end + close_.size();
    }
    size_t start = text.find(open_, pos_);
    if (start == std::string_view::npos) {
      pos_ = std::max(pos_, Back(text, open_));
      return;
    }
    blocks_.push_back({start + open_.size(), text.size(), false});
    searched_ = 0;
  }
}

int StreamBase::calls_started() const {
  int n = 0;
  for (const Sent& s : sent_) n += s.header ? 1 : 0;
  return n;
}

void StreamBase::SendContent(size_t end, DeltaMessage* out) {
  if (end <= content_sent_) return;
  std::string piece = text_.substr(content_sent_, end - content_sent_);
  content_sent_ = end;
  if (out->content) {
    *out->content += piece;
  } else {
    out->content = std::move(piece);
  }
}

bool StreamBase::SendCall(size_t index, const std::optional<std::string>& name,
                          std::string_view args, DeltaMessage* out) {
  if (sent_.size() <= index) sent_.resize(index + 1);
  Sent& sent = sent_[index];
  if (!sent.header) {
    if (!name) return false;
    DeltaToolCall header;
    header.index = static_cast<int>(index);
    header.id = make_id_();
    header.type = "function";
    header.name = *name;
    out->tool_calls.push_back(std::move(header));
    sent.header = true;
  }
  if (args.size() > sent.args) {
    DeltaToolCall piece;
    piece.index = static_cast<int>(index);
    piece.arguments = std::string(args.substr(sent.args));
    out->tool_calls.push_back(std::move(piece));
    sent.args = args.size();
  }
  return true;
}

void StreamBase::FeedScanner(size_t begin, size_t end, CallListScanner* scanner) {
  size_t from = std::max(begin, scanner_fed_);
  if (end > from) scanner->Feed(std::string_view(text_).substr(from, end - from));
  scanner_fed_ = std::max(scanner_fed_, end);
}

void StreamBase::SendScannedCalls(const CallListScanner& scanner, DeltaMessage* out) {
  const auto& calls = scanner.calls();
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].failed() || !SendCall(i, calls[i].name(), calls[i].arguments(), out)) return;
  }
}

DeltaMessage StreamBase::FinishContent() {
  DeltaMessage out;
  if (calls_started() == 0) SendContent(text_.size(), &out);
  return out;
}

std::vector<ToolCall> CallsFrom(const CallListScanner& scanner, StreamBase::IdMaker make_id) {
  std::vector<ToolCall> calls;
  for (const CallObjectScanner& call : scanner.calls()) {
    calls.push_back({make_id(), *call.name(), std::string(call.arguments())});
  }
  return calls;
}

}  // namespace llmserve::frontend::tool_parsers
