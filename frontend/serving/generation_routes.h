#pragma once
// Registers the endpoints that tokenize and generate: POST /v1/completions,
// POST /v1/chat/completions, POST /v1/responses, POST /tokenize, POST /detokenize.

#include "frontend/http/router.h"
#include "frontend/serving/serving_context.h"

namespace llmserve::frontend::serving {

// `context` must outlive the router's server.
void RegisterGenerationRoutes(const ServingContext& context, http::Router* router);

}  // namespace llmserve::frontend::serving
