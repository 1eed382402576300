#pragma once
// Pre-tokenizers: split a normalized section into the pieces that the model
// encodes independently (tokenizer.json "pre_tokenizer").
// Supported types: Split, ByteLevel, Metaspace, Digits, Punctuation,
// Whitespace, WhitespaceSplit, BertPreTokenizer, Sequence.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/tokenizer/json_context.h"
#include "base/status_or.h"

namespace llmserve::common::tokenizer {

// How a Split keeps the delimiters it finds (HF's SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits or rewrites `pieces` in place. `first_section` says whether the
  // first piece starts at the beginning of the input (Metaspace "first").
  virtual void PreTokenize(std::vector<std::string>* pieces, bool first_section) const = 0;
};

// Builds the pre-tokenizer described by `config`; a JSON null gives nullptr.
StatusOr<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const nlohmann::json& config,
                                                         const JsonContext& ctx);

// Splits `piece` at `matches` (sorted, non-overlapping byte ranges) and
// appends the resulting non-empty pieces to `out`. With `invert` the matches
// are the content and the gaps the delimiters.
void SplitAtMatches(const std::string& piece, const std::vector<std::pair<size_t, size_t>>& matches,
                    bool invert, SplitBehavior behavior, std::vector<std::string>* out);

}  // namespace llmserve::common::tokenizer
