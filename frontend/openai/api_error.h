#pragma once
// ApiError: an OpenAI-style error as vLLM returns it: HTTP status plus the body
//   {"error": {"message": ..., "type": ..., "param": ..., "code": <status>}}
// Types follow vLLM where it has one ("BadRequestError" 400, "NotFoundError"
// 404) and the OpenAI SDK's error class names elsewhere (see ErrorTypeFor).

#include <optional>
#include <string>

#include "frontend/http/http_message.h"
#include "frontend/http/router.h"
#include "base/status.h"

namespace llmserve::frontend::openai {

struct ApiError {
  int status = 400;                  // HTTP status, also the body's "code"
  std::string message;               // human-readable reason
  std::string type;                  // "BadRequestError", "NotFoundError", ...
  std::optional<std::string> param;  // the request field at fault, if one is

  bool operator==(const ApiError&) const = default;
};

// The error "type" used for an HTTP status (400 BadRequestError, 401
// AuthenticationError, 403 PermissionDeniedError, 404 NotFoundError, 405
// MethodNotAllowedError, 408 RequestTimeoutError, 409 ConflictError, 413
// RequestTooLargeError, 429 RateLimitError, 501 NotImplementedError, 503
// ServiceUnavailableError, otherwise InternalServerError).
std::string ErrorTypeFor(int status);

// An error with the type that goes with `status`.
ApiError MakeError(int status, std::string message, std::optional<std::string> param = std::nullopt);

// 400 BadRequestError about `param`.
ApiError BadRequest(std::string message, std::optional<std::string> param = std::nullopt);

// 404 for a model name that is not served: "The model `x` does not exist.".
ApiError ModelNotFound(const std::string& model);

// Maps a Status to an error: kInvalidArgument 400, kNotFound 404,
// kResourceExhausted 429, kUnavailable 503, kUnimplemented 501, others 500.
ApiError FromStatus(const Status& status);

// The JSON body of `error`.
std::string ErrorBody(const ApiError& error);

// The HTTP response carrying `error`.
http::HttpResponse ErrorResponse(const ApiError& error);

// An ErrorResponder for the Router, so 404/405/413/... bodies are OpenAI-style.
http::HttpResponse RouterErrorResponse(int status, const std::string& message);

}  // namespace llmserve::frontend::openai
