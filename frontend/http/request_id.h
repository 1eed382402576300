#pragma once
// Request ids: random ones, and vLLM's --enable-request-id-headers, which
// puts X-Request-Id on every response: the request's own X-Request-Id when it
// sent one, else a fresh random id.

#include <string>

#include "frontend/http/http_message.h"

namespace llmserve::frontend::http {

// 32 random hex digits.
std::string RandomHexId();

// The X-Request-Id a response to `request` carries.
std::string ResponseRequestId(const HttpRequest& request);

}  // namespace llmserve::frontend::http
