#pragma once
// vLLM's run-time LoRA routes, registered only when the API server may
// change adapters (--enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING; else
// they are absent: 404):
//   POST /v1/load_lora_adapter   {"lora_name", "lora_path"}
//   POST /v1/unload_lora_adapter {"lora_name", "lora_int_id"?}
// Success is 200 with vLLM's text ("Success: LoRA adapter 'x' added
// successfully."), errors are vLLM's JSON error bodies (RuntimeLoras).

#include "frontend/http/router.h"
#include "frontend/serving/runtime_loras.h"

namespace llmserve::frontend::serving {

// True when the environment allows run-time LoRA updates
// (VLLM_ALLOW_RUNTIME_LORA_UPDATING is 1 or true, case and surrounding spaces aside, as vLLM reads it).
bool RuntimeLoraUpdatingAllowed();

// `loras` (with a utility caller) must outlive the router's server.
void RegisterLoraRoutes(RuntimeLoras* loras, http::Router* router);

}  // namespace llmserve::frontend::serving
