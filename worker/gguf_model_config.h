#pragma once
// The ModelConfig of a GGUF model: architecture from general.architecture
// ("llama" — which llama.cpp also uses for Mistral —, "qwen2", "qwen3") and
// hyper-parameters from the `{arch}.*` keys llama.cpp's converter writes;
// vocab size from token_embd, tied embeddings when output.weight is absent.

#include "base/status_or.h"
#include "common/gguf/gguf_file.h"
#include "worker/model_config.h"

namespace llmserve::worker {

// general.architecture values the worker runs, and what each maps to.
StatusOr<Architecture> GgufArchitecture(const std::string& name, const std::string& source);
// llama.cpp's architecture name for `arch` (kMistral → "llama").
const char* GgufArchitectureName(Architecture arch);

// Errors name the file and the missing or unsupported key.
StatusOr<ModelConfig> GgufModelConfig(const common::gguf::GgufFile& file);

}  // namespace llmserve::worker
