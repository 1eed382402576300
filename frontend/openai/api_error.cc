#include "frontend/openai/api_error.h"

#include <nlohmann/json.hpp>

namespace llmserve::frontend::openai {

std::string ErrorTypeFor(int status) {
  switch (status) {
    case 400: return "BadRequestError";
    case 401: return "AuthenticationError";
    case 403: return "PermissionDeniedError";
    case 404: return "NotFoundError";
    case 405: return "MethodNotAllowedError";
    case 408: return "RequestTimeoutError";
    case 409: return "ConflictError";
    case 413: return "RequestTooLargeError";
    case 429: return "RateLimitError";
    case 501: return "NotImplementedError";
    case 503: return "ServiceUnavailableError";
    default: return status >= 400 && status < 500 ? "BadRequestError" : "InternalServerError";
  }
}

ApiError MakeError(int status, std::string message, std::optional<std::string> param) {
  return ApiError{status, std::move(message), ErrorTypeFor(status), std::move(param)};
}

ApiError BadRequest(std::string message, std::optional<std::string> param) {
  return MakeError(400, std::move(message), std::move(param));
}

ApiError ModelNotFound(const std::string& model) {
  return MakeError(404, "The model `" + model + "` does not exist.", "model");
}

ApiError FromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument: return MakeError(400, status.message());
    case StatusCode::kNotFound: return MakeError(404, status.message());
    case StatusCode::kResourceExhausted: return MakeError(429, status.message());
    case StatusCode::kUnavailable: return MakeError(503, status.message());
    case StatusCode::kUnimplemented: return MakeError(501, status.message());
    default: return MakeError(500, status.message());
  }
}

std::string ErrorBody(const ApiError& error) {
  nlohmann::json body = {{"error",
                          {{"message", error.message},
                           {"type", error.type},
                           {"param", error.param ? nlohmann::json(*error.param) : nlohmann::json(nullptr)},
                           {"code", error.status}}}};
  // Replace, never throw, on invalid UTF-8 echoed back from a request.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

http::HttpResponse ErrorResponse(const ApiError& error) {
  return http::HttpResponse::Make(error.status, "application/json", ErrorBody(error));
}

http::HttpResponse RouterErrorResponse(int status, const std::string& message) {
  return ErrorResponse(MakeError(status, message));
}

}  // namespace llmserve::frontend::openai
