#pragma once
// Added tokens (tokenizer.json "added_tokens"): strings matched in the input
// before the normalizer and the model run, leftmost-longest, with HF's flags:
// single_word (match only at word boundaries), lstrip / rstrip (absorb the
// whitespace to the left / right), normalized (match against the normalized
// text instead of the raw input) and special (skippable when decoding, and
// left unmatched when split_special_tokens is set).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/tokenizer/json_context.h"
#include "base/status.h"

namespace llmserve::common::tokenizer {

struct AddedToken {
  int32_t id = 0;            // its token id
  std::string content;       // the text it matches
  bool single_word = false;  // match only when not inside a word
  bool lstrip = false;       // swallow whitespace before it
  bool rstrip = false;       // swallow whitespace after it
  bool normalized = false;   // matched in normalized text (else in raw text)
  bool special = false;      // a control token (skip_special_tokens drops it)
};

// A part of the input after added-token matching: either an added token
// (`id` >= 0) or plain text to hand to the normalizer/model (`id` == -1).
struct Section {
  std::string_view text;  // view into the split string
  int32_t id = -1;        // the added token's id, or -1 for plain text
};

class AddedTokens {
 public:
  // Reads the "added_tokens" array (absent or null: none).
  Status Load(const nlohmann::json& array, const JsonContext& ctx);

  // Splits `text` at occurrences of the tokens whose `normalized` flag equals
  // `normalized`; special tokens are skipped when `split_special` is set.
  void Split(std::string_view text, bool normalized, bool split_special,
             std::vector<Section>* out) const;

  // All added tokens, in file order.
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  // The token with this id, or nullptr.
  const AddedToken* FindById(int32_t id) const;
  // The token with this content, or nullptr.
  const AddedToken* FindByContent(std::string_view content) const;
  // True when some token has normalized == true.
  bool has_normalized() const { return has_normalized_; }

 private:
  // A byte trie over token contents: children sorted by byte.
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;
    int32_t token = -1;  // index into tokens_ ending here
  };
  int32_t Child(int32_t node, unsigned char b) const;
  void Insert(int32_t token_index);

  std::vector<AddedToken> tokens_;
  std::vector<Node> trie_{Node{}};
  std::vector<int32_t> by_id_;  // id -> index into tokens_, or -1
  bool first_byte_[256] = {};   // whether some token starts with this byte
  bool has_normalized_ = false;
};

}  // namespace llmserve::common::tokenizer
