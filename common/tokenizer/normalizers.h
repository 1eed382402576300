#pragma once
// Normalizers: the first stage of encoding, rewriting the text of each
// section between added tokens (tokenizer.json "normalizer").
// Supported types: NFC, NFD, NFKC, NFKD (utf8proc), Replace, Prepend, Strip,
// StripAccents, Lowercase, Sequence.

#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "common/tokenizer/json_context.h"
#include "base/status_or.h"

namespace llmserve::common::tokenizer {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Rewrites `text` (valid UTF-8) in place.
  virtual void Normalize(std::string* text) const = 0;
};

// Builds the normalizer described by `config`; a JSON null gives nullptr.
StatusOr<std::unique_ptr<Normalizer>> MakeNormalizer(const nlohmann::json& config,
                                                     const JsonContext& ctx);

// Reads a {"String": s} or {"Regex": r} pattern object into a compiled Regex.
class Regex;
StatusOr<std::unique_ptr<Regex>> MakePattern(const nlohmann::json& pattern,
                                             const JsonContext& ctx);

}  // namespace llmserve::common::tokenizer
