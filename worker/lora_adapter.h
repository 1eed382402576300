#pragma once
// A PEFT LoRA adapter (adapter_config.json + adapter_model.safetensors) read
// for one tensor-parallel shard of a base model, kept in fp32 in the layout
// kernels/cpu/lora.h multiplies with.
//
// Sharding follows the base weights: column-parallel projections (q, k, v,
// gate, up) keep all of A and this rank's rows of B; row-parallel ones (o,
// down) keep this rank's columns of A and all of B, so their update is a
// partial sum that joins the base projection's all-reduce.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "kernels/cpu/lora.h"
#include "worker/model_config.h"
#include "worker/model_weights.h"

namespace llmserve::worker {

// The projections an adapter may target (PEFT's target_modules names).
enum class LoraTarget { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr size_t kNumLoraTargets = 7;

// "q_proj", "k_proj", ..., "down_proj".
const char* LoraTargetName(LoraTarget target);

// One target of one layer: this shard's factors (empty where not targeted),
// in fp32, or as bf16 bits when the adapter file holds them in bf16 (exact,
// in half the memory the kernels stream every step).
struct LoraProjection {
  std::vector<float> a_t;  // Aᵀ [in × rank]
  std::vector<float> b_t;  // Bᵀ [rank × out]
  std::vector<uint16_t> a_t16, b_t16;  // the same, bf16 (then a_t and b_t are empty)
  size_t in = 0;
  size_t out = 0;
  bool bf16() const { return !a_t16.empty(); }
  bool empty() const { return a_t.empty() && a_t16.empty(); }
};

struct LoraAdapter {
  std::string name;
  std::string path;
  size_t rank = 0;
  float scale = 1.f;  // lora_alpha / r, or lora_alpha / √r with use_rslora
  std::vector<std::array<LoraProjection, kNumLoraTargets>> layers;  // [num_layers]

  // The kernel's view of `target` in `layer`; rank 0 where not targeted.
  kernels::cpu::LoraFactors Factors(size_t layer, LoraTarget target) const;
};

// The rank limits an adapter is checked against.
struct LoraLimits {
  size_t max_rank = 16;  // --max-lora-rank
};

// Reads the adapter in `dir` for `shard` of a model with `config`. Errors
// (never a crash) name the file and say what is wrong: a missing file, bad
// JSON, a rank above limits.max_rank, a target module outside q/k/v/o/gate/
// up/down_proj and the fused qkv_proj / gate_up_proj (vLLM's packed modules:
// one A shared by the parts, B stacking their outputs, split here into the
// parts' factors), a projection adapted both alone and fused, a tensor of the
// wrong shape or without its A/B partner, an MLP target on a
// mixture-of-experts layer.
StatusOr<std::shared_ptr<const LoraAdapter>> LoadLoraAdapter(const std::string& name, const std::string& dir,
                                                             const ModelConfig& config, const ShardDims& shard,
                                                             const LoraLimits& limits);

}  // namespace llmserve::worker
