#pragma once
// A Hugging Face tokenizer loaded from tokenizer.json + tokenizer_config.json
// (+ generation_config.json when present), with the encode and decode
// semantics of the Rust `tokenizers` library that transformers and vLLM use:
//
//   encode: added tokens split out (raw text) -> normalizer -> added tokens
//           with normalized=true split out -> pre-tokenizer -> BPE model ->
//           post-processor (only with add_special_tokens)
//   decode: ids -> token strings (special ones dropped on request) -> decoder
//
// tokenizer_config.json's add_bos_token / add_eos_token are honoured the way
// transformers' LlamaTokenizerFast / GemmaTokenizerFast do it: for those
// tokenizer classes they replace the post-processor with "[BOS] $A [EOS]".
// Decode does not apply transformers' clean_up_tokenization_spaces (vLLM does
// not either); CleanUpTokenizationSpaces() is there for callers that want it.
//
// All const methods are thread-safe.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/tokenizer/tokenizer_config.h"
#include "base/status_or.h"

namespace llmserve::common::tokenizer {

class AddedTokens;
class BpeModel;
class Decoder;
class Normalizer;
class PostProcessor;
class PreTokenizer;

class Tokenizer {
 public:
  // Loads DIR/tokenizer.json, DIR/tokenizer_config.json (optional) and
  // DIR/generation_config.json (optional). Errors name the file, the JSON
  // path and the offending type. DIR may also be a GGUF model (a .gguf file,
  // or a directory without config.json holding one): its tokenizer.ggml.*
  // metadata is read instead (see gguf_tokenizer.h).
  static StatusOr<std::unique_ptr<Tokenizer>> FromDirectory(const std::string& dir);
  // Same from file contents; `tokenizer_config_json` may be empty. `name` is
  // used for the file names in error messages.
  static StatusOr<std::unique_ptr<Tokenizer>> FromJson(const std::string& tokenizer_json,
                                                       const std::string& tokenizer_config_json,
                                                       const std::string& name);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Token ids of `text`; with `add_special_tokens` the post-processor adds BOS
  // etc. Invalid UTF-8 in `text` is read as U+FFFD.
  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const;
  // Text of `ids`; ids outside the vocabulary are skipped; with
  // `skip_special_tokens` special added tokens are dropped. Always valid UTF-8.
  std::string Decode(std::span<const int32_t> ids, bool skip_special_tokens) const;

  // The id of a token string (added tokens first, then the model vocabulary).
  std::optional<int32_t> TokenToId(std::string_view token) const;
  // The token string of an id (as stored: byte-level or "▁" form).
  std::optional<std::string> IdToToken(int32_t id) const;
  // The raw bytes `id` contributes in the middle of a sequence (byte-level
  // text mapped back to bytes, "▁" as a space, "<0xAB>" as one byte; added
  // tokens give their content), e.g. for grammar-constrained decoding. May be
  // a partial UTF-8 sequence. nullopt for ids outside the vocabulary.
  std::optional<std::string> TokenBytes(int32_t id) const;
  // One more than the largest id (model vocabulary and added tokens).
  int32_t vocab_size() const { return vocab_size_; }
  // True when `id` is an added token marked special.
  bool IsSpecial(int32_t id) const;

  // BOS id (tokenizer_config's bos_token, else generation_config's).
  std::optional<int32_t> bos_token_id() const { return bos_token_id_; }
  // EOS ids: tokenizer_config's eos_token, then generation_config's extra ones.
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }
  // Whether Encode(text, /*add_special_tokens=*/true) starts with BOS.
  bool add_bos() const { return add_bos_; }
  // The raw tokenizer_config.json fields (chat_template, bos/eos strings...).
  const TokenizerConfig& config() const { return config_; }
  // The default chat template source ("" when none).
  const std::string& chat_template() const { return config_.chat_template; }

  // Empties the BPE piece cache (for cold-start benchmarks).
  void ClearCache() const;

  // transformers' clean_up_tokenization: " ." -> ".", " n't" -> "n't", ...
  static std::string CleanUpTokenizationSpaces(std::string text);

 private:
  Tokenizer();
  Status Init(const std::string& tokenizer_json, const std::string& file);
  Status ApplyConfig();
  void EncodeSection(std::string_view text, bool first_section, std::vector<int32_t>* ids) const;
  void EncodePlain(std::string text, bool first_section, std::vector<int32_t>* ids) const;

  TokenizerConfig config_;
  std::unique_ptr<AddedTokens> added_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  int32_t vocab_size_ = 0;
  std::optional<int32_t> bos_token_id_;
  std::vector<int32_t> eos_token_ids_;
  bool add_bos_ = false;
};

}  // namespace llmserve::common::tokenizer
