#pragma once
// Streaming detokenization of one request's output, with stop strings.
//
// Text is produced with vLLM's prefix/read-offset method: each new token is
// decoded together with a short window of the tokens before it, and the text
// beyond what the window's older part decodes to is the delta. Deltas are
// held back while the text ends in U+FFFD (an unfinished UTF-8 sequence), so
// no delta ever splits a character, and — without stop strings — the
// concatenation of all deltas (Push... then Finish) equals
// Tokenizer::Decode of all pushed ids (or, with prompt context, that decode's
// continuation after the context text).
//
// Stop strings follow vLLM: after each token the newly decoded text (plus the
// stop string's length before it, so matches across deltas are found) is
// searched for each stop string in list order; on a match the output is cut
// before the stop string (or after it with include_stop_str_in_output) and the
// request stops. Until then, the last (longest stop string - 1) bytes are held
// back so that a stop string's prefix is never streamed and then retracted.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace llmserve::common::tokenizer {

class Tokenizer;

// Per-request output options (vLLM's SamplingParams fields of the same names).
struct DetokenizerOptions {
  bool skip_special_tokens = true;          // drop special tokens from the text
  std::vector<std::string> stop;            // stop strings
  bool include_stop_str_in_output = false;  // keep the matched stop string
  size_t min_tokens = 0;  // stop strings are not checked before this many output tokens
};

// What one Push/Finish produced.
struct DetokenizerUpdate {
  std::string delta;     // text to show now (valid UTF-8, possibly empty)
  bool stopped = false;  // a stop string matched: the request should end
  int stop_index = -1;   // index into DetokenizerOptions::stop of the match
};

class IncrementalDetokenizer {
 public:
  // `prompt_ids`: the prompt; its last few tokens give the first output
  // tokens their context (e.g. SentencePiece's leading space), as in vLLM.
  // `tokenizer` must outlive this object.
  IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizerOptions options,
                         std::span<const int32_t> prompt_ids = {});

  // Adds one generated token. After a stop it returns an empty update.
  DetokenizerUpdate Push(int32_t id);
  // No more tokens: releases all held-back text.
  DetokenizerUpdate Finish();

  // All output text so far, including held-back text (cut at a stop string).
  const std::string& output_text() const { return output_; }
  // True once a stop string matched.
  bool stopped() const { return stopped_; }
  // Number of generated tokens pushed.
  size_t num_output_tokens() const { return tokens_.size() - context_size_; }

  // How many prompt tokens are kept as context.
  static constexpr size_t kContextTokens = 5;

 private:
  std::string DecodeRange(size_t begin, size_t end) const;
  // Appends newly decoded text and checks the stop strings over it.
  void AppendOutput(std::string_view text);
  // The part of output_ that may be shown now.
  DetokenizerUpdate TakeDelta(bool finished);

  const Tokenizer& tokenizer_;
  DetokenizerOptions options_;
  std::vector<int32_t> tokens_;  // context tokens, then generated ones
  size_t context_size_ = 0;
  size_t prefix_offset_ = 0;     // start of the decode window
  size_t read_offset_ = 0;       // end of the part already turned into text
  std::string prefix_text_;      // decode of tokens_[prefix_offset_, read_offset_)
  std::string output_;           // generated text (cut at a stop string)
  size_t emitted_ = 0;           // bytes of output_ already returned
  size_t hold_back_ = 0;         // bytes withheld for a possible stop string
  bool stopped_ = false;
  int stop_index_ = -1;
};

}  // namespace llmserve::common::tokenizer
