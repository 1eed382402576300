#pragma once
// Loads a GGUF model (llama.cpp tensor names: token_embd, blk.N.attn_*,
// blk.N.ffn_*, output_norm, output) into ModelWeights for one
// tensor-parallel rank.
//
// Q8_0 and Q4_K matrices stay quantized for the integer kernels (gemm_q8.h,
// gemm_q4k.h) unless the precision is the f32 reference mode; every other
// weight (Q6_K, Q5_K, Q4_0, ...) is dequantised (common/gguf DequantizeRows)
// and packed into the LinearWeight format the precision asks for (f32 or
// bf16).
//
// llama.cpp's converter permutes the rows of q and k for the "llama"
// architecture (each head's rows go from [2, head_dim/2] to [head_dim/2, 2]
// so that ggml's interleaved RoPE applies); the loader undoes that, so the
// rotate-half RoPE of the forward sees Hugging Face's layout.

#include <string>

#include "base/status_or.h"
#include "worker/model_config.h"
#include "worker/model_loader.h"
#include "worker/model_weights.h"

namespace llmserve::worker {

// Row `r` of a Hugging Face q/k weight with `head_dim` rows per head comes
// from row LlamaGgufRow(r, head_dim) of the GGUF tensor (the converter's
// permutation applied to row indices; heads stay in place).
size_t LlamaGgufRow(size_t r, size_t head_dim);

// `path` is the .gguf file; errors name it and the tensor.
StatusOr<ModelWeights> LoadGgufModelWeights(const std::string& path, const ModelConfig& config,
                                            const LoadOptions& options);

}  // namespace llmserve::worker
