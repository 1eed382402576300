#pragma once
// Registers the routes that need no tokenizer or engine request on a Router:
// GET /health and GET|POST /ping (200, or 503 while not healthy; empty body, as
// vLLM), GET /version, GET /v1/models; installs the API-key filter on /v1 and OpenAI-style error
// bodies for the router's own errors (404, 405, 413, ...).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frontend/http/router.h"
#include "frontend/openai/lora_cards.h"

namespace llmserve::frontend::openai {

struct InfoRoutesConfig {
  std::vector<std::string> served_model_names;  // first = the default model
  std::string model_root;                       // the model path, reported as "root"
  // The adapters served now, listed after the base model (asked at each GET /v1/models).
  std::function<std::vector<LoraCard>()> lora_cards = [] { return std::vector<LoraCard>(); };
  // The engines' context length (0 before one is ready), asked at each GET /v1/models.
  std::function<int32_t()> max_model_len = [] { return 0; };
  std::string version;                          // reported by GET /version
  std::string api_key;                          // empty = /v1 is open
  int64_t created = 0;                          // model "created" time (seconds since the epoch)
  // True when the engines can serve (EngineClient::IsReady() && !IsDead()).
  std::function<bool()> healthy;
  // Data-parallel ranks that are dead while others serve: /health still
  // answers 200, with {"status": "degraded", "dead_data_parallel_ranks": [...]}.
  std::function<std::vector<uint32_t>()> dead_ranks;
};

// Adds the routes, the /v1 API-key filter and the OpenAI error format to `router`.
void RegisterInfoRoutes(const InfoRoutesConfig& config, http::Router* router);

}  // namespace llmserve::frontend::openai
