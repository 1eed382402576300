#pragma once
// Writes a Hugging Face model directory as a compressed-tensors W8A8 int8
// checkpoint, the layout llm-compressor gives: the decoder layers' linear
// weights as symmetric int8 with one scale per output channel
// (QuantizeRowsInt8) in NAME_scale [rows, 1] (F32 here), everything else as
// it was, and config.json's quantization_config declaring int8 weights and
// dynamic per-token int8 activations. For test models (`llmserve make-model
// --format compressed-tensors`) and tests.

#include <string>

#include "base/status.h"

namespace llmserve::worker {

// Reads `hf_dir` (config.json + safetensors) and writes `out_dir` (created
// if needed): model.safetensors, config.json and a copy of the other files.
Status ExportCompressedTensorsInt8(const std::string& hf_dir, const std::string& out_dir);

// Whether checkpoint tensor `name` (of `dims` dimensions) is one the export
// quantizes: a 2-D weight inside model.layers, other than a MoE router.
bool IsInt8ExportedWeight(const std::string& name, size_t dims);

}  // namespace llmserve::worker
