#pragma once
// Random-weight test models as GGUF files: the same weights WriteTestModel
// writes as safetensors, exported (gguf_export.h) to DIR/model.gguf.

#include <string>

#include "base/status_or.h"
#include "worker/gguf_export.h"
#include "worker/test_model.h"

namespace llmserve::worker {

// Writes DIR/model.gguf (matrices and the embedding in `types`, norms and
// biases F32) and the Hugging Face tokenizer files beside it; no config.json,
// so DIR names the GGUF model (common/gguf/model_path.h).
Status WriteGgufTestModel(const TestModelSpec& spec, const GgufWeightTypes& types, const std::string& out_dir);

}  // namespace llmserve::worker
