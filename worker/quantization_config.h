#pragma once
// The weight quantization a model runs with: what config.json's
// quantization_config declares, or what --quantization asks for.
//
// Supported so far:
//  * compressed-tensors W8A8 int8 ("int-quantized" format): symmetric int8
//    weights with one scale per output channel (or one per tensor), and
//    activations quantized dynamically as the matmul runs;
//  * "int8": a float checkpoint's linear layers quantized that way at load;
//  * GPTQ 4-bit ("gptq" quant_method: AutoGPTQ / GPTQModel's layout, groups
//    in column order) and AWQ 4-bit ("awq", GEMM layout), widened to int8 at
//    load for now;
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
  kInt8AtLoad,             // --quantization int8 on a float checkpoint
  kGptq,                   // GPTQ 4-bit groups
  kAwq,                    // AWQ 4-bit groups
  kGguf,                   // a GGUF file
};

// How a 4-bit checkpoint packs and groups its quants (int4_weights.h).
enum class Int4Packing { kGptq, kAwq };
struct Int4Layout {
  Int4Packing packing = Int4Packing::kGptq;
  size_t group_size = 0;  // input columns per scale and zero; 0: the whole row
  int zero_offset = 0;    // added to every stored zero point (1 in GPTQ's original format)
};

// What config.json's quantization_config declares.
struct CheckpointQuantization {
  Quantization method = Quantization::kNone;
  Int4Layout int4;  // kGptq, kAwq
};

// "compressed-tensors", "int8", "gptq", "awq", "gguf" or "none".
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
