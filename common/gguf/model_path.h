#pragma once
// Where a model's files are: a Hugging Face directory (config.json,
// safetensors, tokenizer.json) or a GGUF file, named directly or as the one
// .gguf file of a directory that has no config.json (as `vllm serve` and
// llama-server take them).

#include <string>

#include "base/status_or.h"

namespace llmserve::common::gguf {

// The GGUF file `model` names, or "" when `model` is a Hugging Face
// directory. An error when `model` does not exist, or is a directory without
// config.json holding more than one .gguf file (split GGUF files are not
// supported yet).
StatusOr<std::string> GgufModelFile(const std::string& model);

}  // namespace llmserve::common::gguf
