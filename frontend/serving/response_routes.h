#pragma once
// Registers the routes over stored responses, as vLLM's API server has them:
//   GET  /v1/responses/{response_id}         the stored response object, else 404;
//   POST /v1/responses/{response_id}/cancel  404 for an unknown id, else 400
//        "Cannot cancel a synchronous response." (llmserve has no background
//        mode, so a stored response is always finished: what vLLM answers then).
// A response POSTed with store: false is never stored, so both answer 404 for it.

#include <string>

#include "frontend/http/router.h"
#include "frontend/openai/api_error.h"
#include "frontend/serving/response_store.h"

namespace llmserve::frontend::serving {

// vLLM's error for a response id it does not hold: 404, type
// invalid_request_error, param response_id, "Response with id '<id>' not found.".
openai::ApiError ResponseNotFound(const std::string& response_id);

// `store` must outlive the router's server.
void RegisterStoredResponseRoutes(const ResponseStore* store, http::Router* router);

}  // namespace llmserve::frontend::serving
