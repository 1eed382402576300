#pragma once
// The tokenizer of a GGUF model: the file's tokenizer.ggml.* metadata turned
// into the tokenizer.json / tokenizer_config.json a Hugging Face tokenizer
// with the same behaviour would have, for Tokenizer::FromJson.
//
// Supported: tokenizer.ggml.model "gpt2" (byte-level BPE) with
// tokenizer.ggml.pre "qwen2" (Qwen2/Qwen3) or "llama-bpe" (Llama 3), whose
// split regexes, normalizer and merge settings are those of the models'
// tokenizer.json. Token types (tokenizer.ggml.token_type): control (3) and
// user-defined (4) tokens become added tokens, special for control ones; the
// others are model vocabulary. bos/eos/unknown/padding ids name the config's
// token texts; add_bos_token / add_eos_token become a post-processor that
// adds them; tokenizer.chat_template (and tokenizer.chat_template.NAME) the
// chat templates.

#include <cstdint>
#include <optional>
#include <string>

#include "base/status_or.h"
#include "common/gguf/gguf_metadata.h"

namespace llmserve::common::tokenizer {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum GgufTokenType : int32_t {
  kGgufTokenNormal = 1,
  kGgufTokenUnknown = 2,
  kGgufTokenControl = 3,
  kGgufTokenUserDefined = 4,
  kGgufTokenUnused = 5,
  kGgufTokenByte = 6,
};

struct HfTokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
};

// The HF files equivalent to `metadata`'s tokenizer. InvalidArgument naming
// the key (and value) for missing keys, wrong types, an unsupported
// tokenizer.ggml.model or tokenizer.ggml.pre, or ids outside the vocabulary.
StatusOr<HfTokenizerFiles> HfTokenizerFromGguf(const gguf::GgufMetadata& metadata);

// The tokenizer of the GGUF model `path` names (a .gguf file, or a directory
// holding one and no tokenizer.json); nullopt when it names no GGUF model.
StatusOr<std::optional<HfTokenizerFiles>> GgufTokenizerFiles(const std::string& path);

}  // namespace llmserve::common::tokenizer
