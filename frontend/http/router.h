#pragma once
// Router: maps (method, path) to a handler, runs prefix filters (such as
// the API-key check on /v1/) before dispatch, and answers unknown paths with
// 404 and a known path with the wrong method with 405. A path is exact, or a
// template whose "{name}" segments each match one non-empty segment (handed
// to the handler as HttpRequest::path_params); exact paths win. Error bodies
// come from an ErrorResponder so that the HTTP layer does not know the OpenAI format.
// Routes are registered before the server starts and never change after.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/http/cors.h"
#include "frontend/http/http_message.h"
#include "frontend/http/response_writer.h"

namespace llmserve::frontend::http {

// Answers one request; runs on an I/O thread and must not block: long work
// keeps `writer` and answers later from any thread.
using Handler = std::function<void(HttpRequest request, std::shared_ptr<ResponseWriter> writer)>;

// Looks at a request before its handler; returning a response answers it instead.
using Filter = std::function<std::optional<HttpResponse>(const HttpRequest& request)>;

// Told of every answered request: the route's path (or "none" for paths no
// route has), the method, the status and the seconds from dispatch to the
// last byte handed to the connection (a stream's end).
using RequestObserver = std::function<void(const std::string& handler, const std::string& method, int status,
                                           double seconds)>;

// Builds the error response for a status and message (404, 405, 413, 400, 500...).
using ErrorResponder = std::function<HttpResponse(int status, const std::string& message)>;

// A text/plain error response: the default ErrorResponder.
HttpResponse PlainErrorResponse(int status, const std::string& message);

class Router {
 public:
  Router() : error_responder_(PlainErrorResponse) {}

  // Registers `handler` for `method` (e.g. "POST") on `path`, exact or a
  // template such as "/v1/responses/{response_id}".
  void Add(std::string method, std::string path, Handler handler);

  // Runs `filter` before the handler of every request whose path starts with `prefix`.
  void AddFilter(std::string prefix, Filter filter);

  // Answers CORS preflights and adds CORS headers to every response (cors.h);
  // applied before the filters, as vLLM's middleware runs before its API-key check.
  void set_cors(CorsPolicy policy) { cors_ = std::move(policy); }

  // Adds X-Request-Id to every response (vLLM's --enable-request-id-headers;
  // request_id.h says which id).
  void set_request_id_headers(bool on) { request_id_headers_ = on; }

  // Reports every request to `observer` (HTTP metrics) under its route's path
  // (a template as registered, "/v1/responses/{response_id}").
  void set_observer(RequestObserver observer) { observer_ = std::move(observer); }

  // Replaces the error body format.
  void set_error_responder(ErrorResponder responder) { error_responder_ = std::move(responder); }

  // Builds an error response with the configured format.
  HttpResponse Error(int status, const std::string& message) const { return error_responder_(status, message); }

  // Routes `request` to its handler, or answers it with a filter's response or an error.
  void Dispatch(HttpRequest request, std::shared_ptr<ResponseWriter> writer) const;

 private:
  using Methods = std::map<std::string, Handler>;  // method -> handler
  // A templated path, split at '/'.
  struct PathTemplate {
    std::string path;                   // as registered
    std::vector<std::string> segments;  // "{name}" or a literal
    Methods methods;
  };
  // The methods of the route `request`'s path names, with its path params
  // filled in, and that route's registered path; nullptr when none.
  const Methods* Find(HttpRequest& request, std::string* route) const;

  std::map<std::string, Methods> routes_;  // exact path -> methods
  std::vector<PathTemplate> templates_;    // in registration order
  std::vector<std::pair<std::string, Filter>> filters_;
  std::optional<CorsPolicy> cors_;
  bool request_id_headers_ = false;
  RequestObserver observer_;
  ErrorResponder error_responder_;
};

}  // namespace llmserve::frontend::http
