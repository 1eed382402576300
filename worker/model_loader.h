#pragma once
// Loads a Hugging Face model directory (config.json + safetensors), or a GGUF
// model (gguf_model_loader.h), into
// ModelWeights for one tensor-parallel rank.

#include <string>

#include "kernels/cpu/linear.h"
#include "base/status_or.h"
#include "worker/expert_placement.h"
#include "worker/model_config.h"
#include "worker/model_weights.h"

namespace llmserve::worker {

struct LoadOptions {
  size_t tp_rank = 0;   // this shard
  size_t tp_size = 1;   // number of shards
  kernels::cpu::MatmulPrecision precision = kernels::cpu::MatmulPrecision::kF32;
  bool show_progress = true;  // a progress bar on stderr when it is a terminal
  std::string quantization;   // --quantization: "" (the checkpoint's), "int8", ... (quantization_config.h)
  // --enable-expert-parallel: the tp_size ranks hold whole experts, placed
  // by `expert_placement`, instead of a slice of each.
  bool expert_parallel = false;
  ExpertPlacement expert_placement = ExpertPlacement::kLinear;
};

// Shard dimensions for `config` split `tp_size` ways, or an error when the
// model does not split evenly. With `expert_parallel` (and experts), the
// experts are placed whole instead (ShardDims::local_experts).
StatusOr<ShardDims> ComputeShardDims(const ModelConfig& config, size_t tp_rank, size_t tp_size,
                                     bool expert_parallel = false,
                                     ExpertPlacement placement = ExpertPlacement::kLinear);

// Reads and validates every tensor this rank needs. Errors name the file and
// the tensor (missing, wrong shape, mixed dtypes).
StatusOr<ModelWeights> LoadModelWeights(const std::string& dir, const ModelConfig& config,
                                        const LoadOptions& options);

}  // namespace llmserve::worker
