#pragma once
// The weight quantization a model runs with: what config.json's
// quantization_config declares, or what --quantization asks for.
//
// Supported so far:
//  * compressed-tensors W8A8 int8 ("int-quantized" format): symmetric int8
//    weights with one scale per output channel (or one per tensor), and
//    activations quantized dynamically as the matmul runs;
//  * compressed-tensors W4A16 ("pack-quantized" format): 4-bit weights,
//    symmetric or with zero points, per group or per channel, act-order
//    too, widened to int8 at load as GPTQ's are;
//  * compressed-tensors FP8 ("float-quantized" format): E4M3 weights with one
//    scale per output channel or per tensor, activations dynamic or none,
//    scaled to the model's float type at load as vLLM's fp8 method is; any of
//    the three compressed-tensors formats may carry a kv_cache_scheme of
//    static fp8 scales per tensor (--kv-cache-dtype fp8);
//  * "int8": a float checkpoint's linear layers quantized that way at load;
//  * GPTQ 4-bit ("gptq" quant_method: AutoGPTQ / GPTQModel's layout, groups
//    in column order) and AWQ 4-bit ("awq", GEMM layout), widened to int8 at
//    load for now;
//  * FP8 E4M3 weights ("fp8" quant_method: vLLM's Fp8Config, as Qwen3-FP8 and
//    DeepSeek-V3 are written: 128 × 128 blocks with one scale each, or one
//    scale per tensor; activations dynamic), scaled to the model's float
//    type at load for now;
//  * "gguf": a GGUF file (its own tensor types).
// Anything else a checkpoint or the flag names is an error that says what is
// not supported, never silently run as something else.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status_or.h"

namespace llmserve::worker {

enum class Quantization {
  kNone,
  kCompressedTensorsInt8,  // int8 weights and their scales in the checkpoint
  kCompressedTensorsWna16, // 4-bit packed weights (W4A16)
  kCompressedTensorsFp8,   // FP8 E4M3 weights with channel or tensor scales
  kInt8AtLoad,             // --quantization int8 on a float checkpoint
  kGptq,                   // GPTQ 4-bit groups
  kAwq,                    // AWQ 4-bit groups
  kGguf,                   // a GGUF file
  kFp8,                    // FP8 E4M3 weights with block or tensor scales
};

// How a 4-bit checkpoint packs and groups its quants (int4_weights.h).
enum class Int4Packing { kGptq, kAwq, kPackQuantized };
struct Int4Layout {
  Int4Packing packing = Int4Packing::kGptq;
  size_t group_size = 0;  // input columns per scale and zero; 0: the whole row
  int zero_offset = 0;    // added to every stored zero point (1 in GPTQ's original format)
  bool symmetric = false; // kPackQuantized: no zero points
};

// How an FP8 checkpoint scales its weights: one scale (NAME.weight_scale_inv)
// per block of block_rows × block_cols, or, with 0 × 0, one per tensor
// (NAME.weight_scale), or per_channel one per output row (NAME.weight_scale
// [out, 1] or [out], compressed-tensors' channel strategy).
struct Fp8Layout {
  size_t block_rows = 0, block_cols = 0;
  bool per_channel = false;
};

// What config.json's quantization_config declares.
struct CheckpointQuantization {
  Quantization method = Quantization::kNone;
  Int4Layout int4;  // kGptq, kAwq
  Fp8Layout fp8;    // kFp8
};

// "compressed-tensors", "int8", "gptq", "awq", "gguf", "fp8" or "none".
const char* QuantizationName(Quantization q);

// Validates config.json's "quantization_config" object (`source` names the
// file in errors) and returns what it declares.
StatusOr<CheckpointQuantization> ParseQuantizationConfig(const nlohmann::json& qc, const std::string& source);

// What to run with, given --quantization `flag` ("" or "None": whatever
// the checkpoint declares) and the checkpoint's own (`checkpoint`; kGguf for
// a GGUF file). A flag that contradicts the checkpoint is an error.
StatusOr<Quantization> ResolveQuantization(const std::string& flag, Quantization checkpoint);

// Whether a --quantization value is one this build accepts ("" included).
Status ValidateQuantizationFlag(const std::string& flag);

}  // namespace llmserve::worker
