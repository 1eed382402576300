#pragma once
// The MODEL argument of `llmserve serve`, `generate`, `tokenize` and
// `chat-template`: a directory, or a Hugging Face id found in the local cache
// at --revision (vLLM's flag), so vLLM users' command lines work unchanged.

#include <string>

#include "base/status_or.h"
#include "deploy/hf_cache.h"

namespace llmserve::deploy {

// Resolves `model` with --revision, in --download-dir or else the cache this
// process's HF variables name; logs where a Hugging Face id was found. Its
// tokenizer_dir is --tokenizer's directory when that flag is set.
struct ModelArgument {
  std::string dir;            // the model directory to load
  std::string hf_id;          // the Hugging Face id it was named by; "" for a path
  std::string tokenizer_dir;  // --tokenizer's directory, else `dir`
};
StatusOr<ModelArgument> ResolveModelArgument(const std::string& model);

// The --tokenizer flag resolved the same way (at the main revision), as an
// absolute directory; "" when the flag is not set (the model's own).
StatusOr<std::string> ResolveTokenizerFlag();

}  // namespace llmserve::deploy
