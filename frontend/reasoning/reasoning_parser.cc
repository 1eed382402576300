#include "frontend/reasoning/reasoning_parser.h"

#include <algorithm>

namespace llmserve::frontend::reasoning {
namespace {

constexpr std::string_view kToolCall = "<tool_call>";

// The length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t PartialOverlap(std::string_view text, std::string_view tag) {
  if (tag.empty()) return 0;
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

std::optional<std::string> NonEmpty(std::string text) {
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace

void ReasoningStream::Route(std::string_view text, bool to_content, ReasoningSplit* out) {
  if (text.empty()) return;
  std::optional<std::string>& slot = to_content ? out->content : out->reasoning;
  if (slot) {
    slot->append(text);
  } else {
    slot = std::string(text);
  }
}

ReasoningSplit ReasoningStream::Feed(std::string_view delta) {
  constexpr std::string_view kStart = ReasoningParser::start_tag();
  constexpr std::string_view kEnd = ReasoningParser::end_tag();
  constexpr size_t npos = std::string::npos;
  ReasoningSplit out;
  if (ended_) {
    Route(delta, true, &out);
    return out;
  }
  pending_.append(delta);
  while (true) {
    size_t s = start_dropped_ ? npos : pending_.find(kStart);
    size_t e = pending_.find(kEnd);
    size_t im = implicit_end_.empty() ? npos : pending_.find(implicit_end_);
    size_t m = std::min({s, e, im});
    if (m == npos) break;
    Route(std::string_view(pending_).substr(0, m), false, &out);
    if (m == s) {
      start_dropped_ = true;
      pending_.erase(0, s + kStart.size());
      continue;
    }
    ended_ = true;
    end_ = m == e ? End::kCloseTag : End::kImplicit;
    std::string rest = m == e ? pending_.substr(e + kEnd.size()) : pending_.substr(im);
    pending_.clear();
    Route(rest, true, &out);
    return out;
  }
  size_t hold = std::max({PartialOverlap(pending_, kEnd),
                          start_dropped_ ? 0 : PartialOverlap(pending_, kStart),
                          PartialOverlap(pending_, implicit_end_)});
  Route(std::string_view(pending_).substr(0, pending_.size() - hold), false, &out);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

ReasoningSplit ReasoningStream::Finish() {
  ReasoningSplit out;
  Route(pending_, false, &out);
  pending_.clear();
  return out;
}

ReasoningSplit ReasoningParser::Extract(std::string_view model_output) const {
  if (options_.prompt_is_reasoning_end) return {std::nullopt, NonEmpty(std::string(model_output))};
  ReasoningStream stream(false, implicit_end_);
  ReasoningSplit first = stream.Feed(model_output);
  ReasoningSplit last = stream.Finish();
  std::string reasoning = first.reasoning.value_or("") + last.reasoning.value_or("");
  std::string content = first.content.value_or("");
  switch (stream.end_) {
    case ReasoningStream::End::kNone:
      if (no_end_is_reasoning_) return {NonEmpty(std::move(reasoning)), std::nullopt};
      return {std::nullopt, NonEmpty(std::move(reasoning))};
    case ReasoningStream::End::kCloseTag:  // as vLLM: "" reasoning stays a string
      return {std::move(reasoning), NonEmpty(std::move(content))};
    case ReasoningStream::End::kImplicit:
      break;
  }
  return {NonEmpty(std::move(reasoning)), NonEmpty(std::move(content))};
}

ReasoningStream ReasoningParser::NewStream() const {
  // Without thinking the chat template closes the think block in the prompt,
  // so a stream is all content (vLLM routes it so via prompt_is_reasoning_end).
  return ReasoningStream(options_.prompt_is_reasoning_end || !no_end_is_reasoning_, implicit_end_);
}

const std::vector<std::string>& ReasoningParserNames() {
  static const std::vector<std::string> names = {"deepseek_r1", "qwen3"};
  return names;
}

StatusOr<std::unique_ptr<ReasoningParser>> MakeReasoningParser(std::string_view name,
                                                               ReasoningOptions options) {
  if (name == "deepseek_r1") {
    return std::make_unique<ReasoningParser>("deepseek_r1", options, true, "");
  }
  if (name == "qwen3") {
    bool thinking = options.enable_thinking;
    return std::unique_ptr<ReasoningParser>(
        std::make_unique<ReasoningParser>("qwen3", options, thinking, thinking ? kToolCall : ""));
  }
  std::string known;
  for (const std::string& n : ReasoningParserNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown reasoning parser '" + std::string(name) +
                                 "'; known parsers: " + known);
}

}  // namespace llmserve::frontend::reasoning
