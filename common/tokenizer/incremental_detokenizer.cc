#include "common/tokenizer/incremental_detokenizer.h"

#include <algorithm>

#include "common/tokenizer/tokenizer.h"
#include "base/utf8.h"

namespace llmserve::common::tokenizer {

namespace {
bool EndsWithReplacement(const std::string& s) {
  return s.size() >= base::kReplacementChar.size() &&
         s.compare(s.size() - base::kReplacementChar.size(), base::kReplacementChar.size(), base::kReplacementChar) == 0;
}
bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}
}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizerOptions options,
                                               std::span<const int32_t> prompt_ids)
    : tokenizer_(tokenizer), options_(std::move(options)) {
  const size_t n = std::min(prompt_ids.size(), kContextTokens);
  tokens_.assign(prompt_ids.end() - static_cast<std::ptrdiff_t>(n), prompt_ids.end());
  context_size_ = read_offset_ = n;
  prefix_text_ = DecodeRange(0, n);
  if (!options_.include_stop_str_in_output) {
    for (const auto& s : options_.stop) hold_back_ = std::max(hold_back_, s.empty() ? 0 : s.size() - 1);
  }
  options_.stop.erase(std::remove(options_.stop.begin(), options_.stop.end(), std::string()),
                      options_.stop.end());
}

std::string IncrementalDetokenizer::DecodeRange(size_t begin, size_t end) const {
  return tokenizer_.Decode(std::span<const int32_t>(tokens_.data() + begin, end - begin),
                           options_.skip_special_tokens);
}

void IncrementalDetokenizer::AppendOutput(std::string_view text) {
  output_.append(text);
  if (num_output_tokens() <= options_.min_tokens) return;  // vLLM: checked only after min_tokens
  for (size_t k = 0; k < options_.stop.size(); ++k) {
    const std::string& stop = options_.stop[k];
    const size_t back = text.size() + stop.size() - 1;
    const size_t from = output_.size() > back ? output_.size() - back : 0;
    const size_t at = output_.find(stop, from);
    if (at == std::string::npos) continue;
    output_.resize(options_.include_stop_str_in_output ? at + stop.size() : at);
    stopped_ = true;
    stop_index_ = static_cast<int>(k);
    return;
  }
}

DetokenizerUpdate IncrementalDetokenizer::TakeDelta(bool finished) {
  size_t end = output_.size();
  if (!finished && !stopped_) {
    end = end > hold_back_ ? end - hold_back_ : 0;
    // Never cut inside a character.
    while (end > emitted_ && end < output_.size() &&
           (static_cast<unsigned char>(output_[end]) & 0xC0) == 0x80) {
      --end;
    }
  }
  DetokenizerUpdate u;
  if (end > emitted_) {
    u.delta = output_.substr(emitted_, end - emitted_);
    emitted_ = end;
  }
  u.stopped = stopped_;
  u.stop_index = stop_index_;
  return u;
}

DetokenizerUpdate IncrementalDetokenizer::Push(int32_t id) {
  if (stopped_) return {};
  tokens_.push_back(id);
  std::string text = DecodeRange(prefix_offset_, tokens_.size());
  if (text.size() > prefix_text_.size() && !EndsWithReplacement(text) && StartsWith(text, prefix_text_)) {
    AppendOutput(std::string_view(text).substr(prefix_text_.size()));
    // Slide the window; its older part must decode to some text, or a
    // decoder that strips a leading space would eat the next delta's.
    std::string next_prefix = DecodeRange(read_offset_, tokens_.size());
    if (!next_prefix.empty()) {
      prefix_offset_ = read_offset_;
      prefix_text_ = std::move(next_prefix);
    } else {
      prefix_text_ = std::move(text);
    }
    read_offset_ = tokens_.size();
  }
  return TakeDelta(false);
}

DetokenizerUpdate IncrementalDetokenizer::Finish() {
  if (!stopped_ && read_offset_ < tokens_.size()) {
    std::string text = DecodeRange(prefix_offset_, tokens_.size());
    if (StartsWith(text, prefix_text_)) {
      if (text.size() > prefix_text_.size()) AppendOutput(std::string_view(text).substr(prefix_text_.size()));
    } else {
      // The window no longer extends its older part (e.g. a character split
      // between prompt and output): fall back to the output tokens alone.
      std::string all = DecodeRange(context_size_, tokens_.size());
      if (all.size() > output_.size() && StartsWith(all, output_)) {
        AppendOutput(std::string_view(all).substr(output_.size()));
      }
    }
    read_offset_ = tokens_.size();
  }
  return TakeDelta(true);
}

}  // namespace llmserve::common::tokenizer
