#pragma once
// What the generation endpoints share: the engine client, the tokenizer, the
// chat template and the served model's facts. Owned by the frontend's main;
// handlers hold a reference for the server's lifetime.

#include <memory>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "frontend/chat_template/chat_template.h"
#include "frontend/engine_client.h"
#include "frontend/metrics/frontend_metrics.h"
#include "frontend/openai/sampling_request.h"
#include "frontend/serving/request_log.h"
#include "frontend/serving/response_store.h"
#include "frontend/serving/runtime_loras.h"
#include "frontend/tool_parsers/tool_parser.h"

namespace llmserve::frontend::serving {

// The pooling runner's facts (--runner pooling), for /v1/embeddings and /pooling.
struct PoolingServing {
  bool enabled = false;                         // the engines embed; the generation endpoints answer 400
  bool normalize = true;                        // requests that do not say: L2-normalize
  bool matryoshka = false;                      // config.json's is_matryoshka: `dimensions` may truncate
  std::vector<int32_t> matryoshka_dimensions;   // config.json's; non-empty: the only `dimensions` allowed
};

struct ServingContext {
  EngineClient* engine = nullptr;                         // routes requests to engine cores
  const common::tokenizer::Tokenizer* tokenizer = nullptr;
  const ChatTemplate* chat_template = nullptr;            // null: the model has none (chat answers 400)
  std::vector<std::string> served_model_names;            // first = default
  RuntimeLoras* loras = nullptr;                          // LoRA adapters, also valid "model" names
  openai::GenerationDefaults defaults;                    // from generation_config.json
  std::vector<int32_t> eos_token_ids;                     // stop unless ignore_eos
  openai::ParseOptions parse_options;
  metrics::FrontendMetrics* metrics = nullptr;            // null: requests are not measured
  const tool_parsers::ToolParser* tool_parser = nullptr;  // --enable-auto-tool-choice; null: auto is refused
  std::string reasoning_parser;                           // --reasoning-parser; "": no reasoning split
  RequestLogOptions request_log;                          // --enable-log-requests / --enable-log-outputs
  ResponseStore* responses = nullptr;                     // stored /v1/responses conversations
  PoolingServing pooling;
};

}  // namespace llmserve::frontend::serving
