#pragma once
// Writing a Hugging Face tokenizer into GGUF metadata the way llama.cpp's
// convert_hf_to_gguf.py does for byte-level BPE ("gpt2") vocabularies:
// tokenizer.ggml.model = "gpt2", tokenizer.ggml.pre, tokens in id order
// (added tokens included, gaps filled with "[PAD<id>]"), token_type (1
// normal, 3 control for special added tokens, 4 user-defined for the other
// added tokens), merges as "a b" strings, bos/eos/unknown/padding ids,
// add_bos_token / add_eos_token, and tokenizer.chat_template.
// For tests and `llmserve make-model --format gguf`.

#include <string>

#include "base/status_or.h"
#include "common/gguf/gguf_writer.h"

namespace llmserve::common::tokenizer {

// Reads HF_TOKENIZER_DIR (tokenizer.json, tokenizer_config.json) and sets the
// tokenizer.ggml.* keys and tokenizer.chat_template on `writer`. `pre` is the
// tokenizer.ggml.pre value ("qwen2", "llama-bpe"). InvalidArgument when the
// tokenizer is not a byte-level BPE tokenizer.
Status WriteTokenizerMetadata(const std::string& hf_tokenizer_dir, const std::string& pre,
                              gguf::GgufWriter* writer);

}  // namespace llmserve::common::tokenizer
