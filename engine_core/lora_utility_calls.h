#pragma once
// The LoRA utility calls a frontend sends every engine (vLLM's add_lora,
// remove_lora, list_loras), with string arguments and JSON results:
//   add_lora [name, path, base_model_name] -> {"ok": true} or {"code": HTTP status, "message": ...}
//   remove_lora [name]                     -> the same
//   list_loras []                          -> [{"name", "path", "base_model_name"}, ...]
// Failures to load are results, not utility failures, so that the frontend
// can answer vLLM's status (404 for a path without an adapter, else 400).

#include <optional>
#include <string>

#include "engine_core/engine_core.h"
#include "proto/engine_core_request.h"

namespace llmserve::engine_core {

// The result of `request` if it is one of these methods (on the main
// thread, between steps), else nullopt.
std::optional<std::string> HandleLoraUtility(EngineCore& core, const proto::UtilityRequest& request);

}  // namespace llmserve::engine_core
