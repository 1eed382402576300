#pragma once
// `llmserve make-model --lora-adapter DIR --base MODEL_DIR [--lora-rank R ...]`:
// writes a PEFT LoRA adapter with seeded random factors for the model in
// MODEL_DIR (see worker/test_lora_adapter.h).

#include <map>
#include <string>

namespace llmserve::deploy {

// Usage text of the adapter options (part of make-model's --help).
extern const char* const kMakeLoraAdapterUsage;

// Runs with make-model's parsed options (dashed names without "--", values);
// returns the exit status, 2 for a usage error.
int RunMakeLoraAdapter(std::map<std::string, std::string> opts);

}  // namespace llmserve::deploy
