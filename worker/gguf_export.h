#pragma once
// Writes a Hugging Face model directory's weights as a GGUF file, the way
// llama.cpp's convert_hf_to_gguf.py lays them out: llama.cpp tensor names,
// q/k rows permuted for the "llama" architecture, matrices (and the
// embedding) in the requested type, norms and biases in F32, and the
// `{arch}.*` hyper-parameter metadata. For test models (`llmserve
// make-model --format gguf`) and tests; tokenizer metadata is not written
// here.

#include <string>

#include "base/status_or.h"
#include "common/gguf/ggml_type.h"

namespace llmserve::worker {

// "q4_k" → kQ4_K: the types make-model writes (f32, f16, bf16, q8_0, q4_0,
// q4_1, q5_0, q5_1, q4_k, q5_k, q6_k), case-insensitive.
StatusOr<common::gguf::GgmlType> ParseGgufWeightType(const std::string& name);

// Reads `hf_dir` (config.json + safetensors) and writes `out_path`.
Status ExportGguf(const std::string& hf_dir, common::gguf::GgmlType type, const std::string& out_path);

}  // namespace llmserve::worker
