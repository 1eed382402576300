#pragma once
// Loads a Hugging Face model directory (config.json + safetensors), or a GGUF
// model (gguf_model_loader.h), into
// ModelWeights for one tensor-parallel rank.

#include <string>

#include "kernels/cpu/linear.h"
#include "base/status_or.h"
#include "worker/model_config.h"
#include "worker/model_weights.h"

namespace llmserve::worker {

struct LoadOptions {
  size_t tp_rank = 0;   // this shard
  size_t tp_size = 1;   // number of shards
  kernels::cpu::MatmulPrecision precision = kernels::cpu::MatmulPrecision::kF32;
  bool show_progress = true;  // a progress bar on stderr when it is a terminal
  std::string quantization;   // --quantization: "" (the checkpoint's), "int8", ... (quantization_config.h)
};

// Shard dimensions for `config` split `tp_size` ways, or an error when the
// model does not split evenly.
StatusOr<ShardDims> ComputeShardDims(const ModelConfig& config, size_t tp_rank, size_t tp_size);

// Reads and validates every tensor this rank needs. Errors name the file and
// the tensor (missing, wrong shape, mixed dtypes).
StatusOr<ModelWeights> LoadModelWeights(const std::string& dir, const ModelConfig& config,
                                        const LoadOptions& options);

}  // namespace llmserve::worker
