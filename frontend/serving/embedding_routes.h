#pragma once
// Registers the pooling runner's endpoints: POST /v1/embeddings and POST
// /pooling (vLLM's). Under the generation runner they answer 400 "The model
// does not support Embeddings API", as vLLM's do.

#include "frontend/http/router.h"
#include "frontend/serving/serving_context.h"

namespace llmserve::frontend::serving {

// `context` must outlive the router's server.
void RegisterEmbeddingRoutes(const ServingContext& context, http::Router* router);

}  // namespace llmserve::frontend::serving
