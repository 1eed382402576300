#pragma once
// The BPE model (tokenizer.json "model": {"type": "BPE"}): byte-level
// vocabularies (GPT-2, Llama 3, Qwen, DeepSeek) and SentencePiece-style ones
// with byte fallback (Llama 2, Mistral, Gemma). Options: ignore_merges,
// byte_fallback, fuse_unk, unk_token, continuing_subword_prefix,
// end_of_word_suffix.
//
// Speed: merges live in an open-addressing table keyed by the pair of ids
// (rank and merged id as the value); a word is merged on an array-backed
// linked list with a binary heap of candidate pairs (a linear scan for short
// words); results for pieces under 256 bytes are cached, sharded by hash so
// that concurrent encoders rarely contend.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/tokenizer/json_context.h"
#include "base/status_or.h"

namespace llmserve::common::tokenizer {

// Hash and equality that let unordered maps keyed by std::string be probed
// with a std::string_view without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // Reads the "model" object of tokenizer.json.
  static StatusOr<std::unique_ptr<BpeModel>> FromJson(const nlohmann::json& model,
                                                      const JsonContext& ctx);
  ~BpeModel();

  // Appends the ids of one pre-tokenized piece to `ids`. Thread-safe.
  void Tokenize(std::string_view piece, std::vector<int32_t>* ids) const;

  // Empties the piece cache. Thread-safe.
  void ClearCache() const;

  // The id of `token` in the model vocabulary, if any.
  std::optional<int32_t> TokenToId(std::string_view token) const;
  // The token string of `id`, or nullptr when the vocabulary has no such id.
  const std::string* IdToToken(int32_t id) const;
  // One more than the largest id in the vocabulary.
  int32_t id_limit() const { return static_cast<int32_t>(id_to_token_.size()); }
  // True when the vocabulary holds "<0x00>".."<0xFF>" and byte_fallback is on.
  bool byte_fallback() const { return byte_fallback_; }

 private:
  BpeModel() = default;
  // FromJson's parts: the flags ("type", "byte_fallback", ...), then the
  // vocabulary with the unk, byte and single-character ids, then the merges.
  Status ReadOptions(const nlohmann::json& model, const JsonContext& ctx);
  Status ReadVocab(const nlohmann::json& model, const JsonContext& ctx);
  Status ReadMerges(const nlohmann::json& model, const JsonContext& ctx);
  struct Symbol;
  struct PairTable;
  struct CacheShard;
  // Merges `symbols` in place by rank (lowest first, leftmost on ties).
  void MergeSymbols(std::vector<Symbol>* symbols) const;
  void TokenizeUncached(std::string_view piece, std::vector<int32_t>* ids) const;
  int32_t CharId(std::string_view ch, bool first, bool last) const;

  TokenMap token_to_id_;
  std::vector<const std::string*> id_to_token_;  // keys of token_to_id_ (node-stable), or null
  std::vector<int32_t> bmp_char_id_;  // code point < 0x10000 -> id of that 1-char token, or -1
  std::unique_ptr<PairTable> merges_;
  std::optional<int32_t> unk_id_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  int32_t byte_ids_[256] = {};
  std::unique_ptr<CacheShard[]> cache_;
};

}  // namespace llmserve::common::tokenizer
