#pragma once
// Cross-origin resource sharing as vLLM's API server does it (Starlette's
// CORSMiddleware, set by --allowed-origins / --allowed-methods /
// --allowed-headers / --allow-credentials): a request without an Origin
// header is untouched; a preflight (OPTIONS with Access-Control-Request-Method)
// is answered here, 200 "OK" or 400 "Disallowed CORS origin, method, headers";
// any other response to an allowed origin carries Access-Control-Allow-Origin
// ("*" when every origin is allowed and credentials are not, else the origin
// with "Vary: Origin").

#include <optional>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "frontend/http/http_message.h"

namespace llmserve::frontend::http {

struct CorsPolicy {
  std::vector<std::string> allowed_origins = {"*"};  // "*": any
  std::vector<std::string> allowed_methods = {"*"};  // "*": DELETE GET HEAD OPTIONS PATCH POST PUT
  std::vector<std::string> allowed_headers = {"*"};  // "*": whatever the preflight asks for
  bool allow_credentials = false;
};

// The answer to `request` when it is a preflight, else nullopt.
std::optional<HttpResponse> CorsPreflight(const CorsPolicy& policy, const HttpRequest& request);

// The headers any other response to `request` gets (none without an allowed Origin).
Headers CorsResponseHeaders(const CorsPolicy& policy, const HttpRequest& request);

// A flag's JSON list of strings ('["*"]', vLLM's format); InvalidArgument naming `flag` otherwise.
StatusOr<std::vector<std::string>> ParseCorsList(const std::string& flag, const std::string& json_text);

}  // namespace llmserve::frontend::http
