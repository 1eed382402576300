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

// The matrix types of an export: `base`, and `more_bits` for the matrices
// llama.cpp's Q4_K_M and Q5_K_M mixtures give more bits: attn_v and
// ffn_down of the first and last eighth of the layers and of every third
// layer between, and the output layer (the embedding when it is tied).
struct GgufWeightTypes {
  GgufWeightTypes(common::gguf::GgmlType type) : base(type), more_bits(type) {}  // NOLINT: one type for all
  GgufWeightTypes(common::gguf::GgmlType base_type, common::gguf::GgmlType more) : base(base_type), more_bits(more) {}
  common::gguf::GgmlType base, more_bits;
};

// ParseGgufWeightType's types, and "q4_k_m" (Q4_K with Q6_K) and "q5_k_m"
// (Q5_K with Q6_K).
StatusOr<GgufWeightTypes> ParseGgufWeightTypes(const std::string& name);
// "Q4_K_M" for such a mixture, else the type's name.
std::string GgufWeightTypesName(const GgufWeightTypes& types);

// Reads `hf_dir` (config.json + safetensors) and writes `out_path`.
Status ExportGguf(const std::string& hf_dir, const GgufWeightTypes& types, const std::string& out_path);

}  // namespace llmserve::worker
