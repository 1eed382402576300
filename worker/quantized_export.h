#pragma once
// Writes a Hugging Face model directory as a quantized checkpoint: the
// decoder layers' linear weights replaced by their quantized tensors,
// everything else as it was, config.json gaining a quantization_config, the
// other files copied. For test models (`llmserve make-model --format
// compressed-tensors|gptq|awq`) and tests.
//  * compressed-tensors W8A8 int8, the layout llm-compressor gives: symmetric
//    int8 with one scale per output channel (QuantizeRowsInt8) in NAME_scale
//    [rows, 1] (F32 here), and dynamic per-token int8 activations declared;
//  * GPTQ and AWQ 4-bit in int4_weights.h's layouts (GPTQ's original format:
//    zero points stored minus one, g_idx in column order; AWQ's GEMM layout),
//    rounded to nearest per output row and group of `group_size` input
//    columns, asymmetric (scale = (max - min) / 15 over the group with 0
//    included, kept as f16; zero point in [1, 15] for GPTQ, [0, 15] for AWQ).
//    Real checkpoints come from the GPTQ and AWQ algorithms, which this is not;
//  * FP8 E4M3 as vLLM's "fp8" method reads it (fp8_weights.h): per block of
//    `block` × `block` (Qwen3-FP8's 128 × 128; 0: per tensor), scale =
//    max|w| / 448 in F32, weights rounded to nearest E4M3.

#include <string>

#include "base/status.h"

namespace llmserve::worker {

// Reads `hf_dir` (config.json + safetensors) and writes `out_dir` (created
// if needed).
Status ExportCompressedTensorsInt8(const std::string& hf_dir, const std::string& out_dir);
// `group_size` divides every quantized weight's in_features and is a multiple of 32.
// desc_act: act-order, each weight's groups made of its input columns taken in
// a shuffled order, g_idx saying which group each column is in.
Status ExportGptq(const std::string& hf_dir, size_t group_size, const std::string& out_dir, bool desc_act = false);
Status ExportAwq(const std::string& hf_dir, size_t group_size, const std::string& out_dir);
// compressed-tensors W4A16 (pack-quantized): 4-bit groups of `group_size`
// input columns, symmetric (zero point 0) or with zero points; act_order:
// groups of shuffled columns with weight_g_idx (actorder "group").
Status ExportCompressedTensorsW4A16(const std::string& hf_dir, size_t group_size, bool symmetric,
                                    const std::string& out_dir, bool act_order = false);
Status ExportFp8(const std::string& hf_dir, size_t block, const std::string& out_dir);
// compressed-tensors FP8 (float-quantized, as RedHatAI's *-FP8-dynamic): E4M3
// weights with one scale per output channel, dynamic per-token activations.
Status ExportCompressedTensorsFp8(const std::string& hf_dir, const std::string& out_dir);

// Whether checkpoint tensor `name` (of `dims` dimensions) is one the exports
// quantize: a 2-D weight inside model.layers, other than a MoE router.
bool IsQuantizedLinearWeight(const std::string& name, size_t dims);

}  // namespace llmserve::worker
