#pragma once
// Writes PEFT LoRA adapters with seeded random factors for a model
// directory: the fixtures of the LoRA tests and `llmserve make-model
// --lora-adapter`. Unlike a freshly initialised PEFT adapter (B = 0), both
// A and B are random, so the adapter changes the model's outputs.

#include <string>
#include <vector>

#include "base/status.h"

namespace llmserve::worker {

struct TestLoraSpec {
  size_t rank = 8;
  double lora_alpha = 16;
  bool use_rslora = false;
  // PEFT target_modules (also the fused qkv_proj, gate_up_proj); an MLP
  // target skips mixture-of-experts layers.
  std::vector<std::string> targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  uint64_t seed = 1;
  double std = 0.05;           // A and B ~ N(0, std²), each tensor seeded by (seed, name)
  std::string dtype = "f32";   // bf16 | f16 | f32
};

// Writes adapter_config.json and adapter_model.safetensors into `out_dir`
// (created if needed) for the model in `model_dir` (its config.json gives
// the shapes).
Status WriteTestLoraAdapter(const TestLoraSpec& spec, const std::string& model_dir, const std::string& out_dir);

}  // namespace llmserve::worker
