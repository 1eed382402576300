#pragma once
// vLLM's LoRA flags (--enable-lora, --lora-modules, --max-loras,
// --max-lora-rank, --max-cpu-loras), validated into the EngineConfig's
// LoraConfig.

#include <string>
#include <vector>

#include "base/status.h"
#include "proto/engine_config.pb.h"

namespace llmserve::deploy {

// Parses --lora-modules values, one per line: `name=path` or vLLM's JSON
// `{"name": ..., "path": ..., "base_model_name": ...}`. A missing
// base_model_name is left empty (the served model's name).
Status ParseLoraModules(const std::string& values, std::vector<proto::LoraModule>* out);

// Fills config->lora from the flags; errors name the flag. `served_name` is
// the base model's name, which no adapter may take.
Status LoraConfigFromFlags(const std::string& served_name, proto::LoraConfig* config);

// vLLM takes several values after one --lora-modules (and the flag
// repeated): rewrites every `--lora-modules V1 V2 ...` in `args` into one
// `--lora-modules=V1\nV2...` where the first stood. A value is a following
// argument holding '=' or starting with '{'; the next other argument ends them.
std::vector<std::string> JoinLoraModuleArgs(const std::vector<std::string>& args);

}  // namespace llmserve::deploy
