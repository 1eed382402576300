#pragma once
// A compiled PCRE2 pattern (UTF + UCP, JIT) for the Split pre-tokenizer and
// the Replace normalizer/decoder. Patterns in tokenizer.json are written for
// Oniguruma (what Hugging Face tokenizers use); Compile() adapts the one place
// where PCRE2 differs: `\s` there is Unicode White_Space, which includes U+0085.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status_or.h"

namespace llmserve::common::tokenizer {

class Regex {
 public:
  // Compiles `pattern` (a regular expression, or a literal string when
  // `literal`). Errors carry PCRE2's message and the offset.
  static StatusOr<std::unique_ptr<Regex>> Compile(std::string_view pattern, bool literal);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends the [start, end) byte ranges of the non-empty, non-overlapping
  // matches in `text`, left to right. `text` must be valid UTF-8. Thread-safe.
  void FindAll(std::string_view text, std::vector<std::pair<size_t, size_t>>* matches) const;

  // Replaces every match with `replacement` (inserted literally).
  std::string ReplaceAll(std::string_view text, std::string_view replacement) const;

 private:
  Regex(void* code, std::string literal) : code_(code), literal_(std::move(literal)) {}
  void* code_;           // pcre2_code_8*, or null for a literal
  std::string literal_;  // the string searched for when code_ is null
};

// Rewrites Oniguruma's `\s` / `\S` into PCRE2 classes that also cover U+0085.
std::string AdaptOnigurumaPattern(std::string_view pattern);

}  // namespace llmserve::common::tokenizer
