#pragma once
// HttpRequest / HttpResponse: the plain-data view of one HTTP exchange that
// handlers see. No Boost.Beast here: only connection.cc includes Beast.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmserve::frontend::http {

// Header fields in arrival order; names compare case-insensitively.
using Headers = std::vector<std::pair<std::string, std::string>>;

// Returns the value of the first header named `name` (any case), or nullptr.
const std::string* FindHeader(const Headers& headers, std::string_view name);

// One parsed request.
struct HttpRequest {
  std::string method;   // "GET", "POST", ... as sent
  std::string target;   // request target as sent, e.g. "/v1/models?x=1"
  std::string path;     // target without the query string
  std::string query;    // text after '?', empty if none
  Headers headers;      // every header field
  std::string body;     // the full body (bounded by max_request_body_bytes)
  std::string remote;   // peer "address:port", for logs
  std::map<std::string, std::string, std::less<>> path_params;  // "{name}" segments of the route (Router)

  // Returns the value of header `name` (any case), or nullptr.
  const std::string* header(std::string_view name) const { return FindHeader(headers, name); }
  // The path segment the route's "{name}" matched (as sent, not percent-decoded), or "".
  std::string path_param(std::string_view name) const {
    auto it = path_params.find(name);
    return it == path_params.end() ? std::string() : it->second;
  }
};

// One complete (non-streaming) response.
struct HttpResponse {
  int status = 200;                            // HTTP status code
  std::string content_type = "application/json";  // Content-Type header
  std::string body;                            // the whole body
  Headers headers;                             // extra header fields

  // A response with this status, content type and body.
  static HttpResponse Make(int status, std::string content_type, std::string body) {
    HttpResponse r;
    r.status = status;
    r.content_type = std::move(content_type);
    r.body = std::move(body);
    return r;
  }
};

// Splits a request target into path and query ("/a?b=c" -> "/a", "b=c").
void SplitTarget(std::string_view target, std::string* path, std::string* query);

}  // namespace llmserve::frontend::http
