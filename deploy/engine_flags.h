#pragma once
// The engine flags `llmserve serve` and `llmserve generate` share (vLLM's
// names), and their translation into the EngineConfig sent to engines.

#include <string>

#include "proto/engine_config.pb.h"
#include "base/status.h"

namespace llmserve::deploy {

// Builds the engine configuration from the flags for `model_dir`; an error
// names the offending flag. `model_name` is what the user called the model
// (a Hugging Face id); the served model name defaults to it, as in vLLM, and
// else to the directory's name.
Status EngineConfigFromFlags(const std::string& model_dir, proto::EngineConfig* config,
                             const std::string& model_name = "");

}  // namespace llmserve::deploy
