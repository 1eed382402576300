#pragma once
// Internal to the HTTP server: the Boost.Beast request parser with the
// server's limits, and the handler's view (HttpRequest) of what it parsed.
// Included by connection.cc and the HTTP fuzz target only (each translation
// unit that includes Beast is slow to build).

#include <cstdint>
#include <string>
#include <utility>

#include <boost/beast/http.hpp>

#include "frontend/http/http_message.h"
#include "frontend/http/http_server.h"

namespace llmserve::frontend::http::internal {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// Applies the header and body limits of `config` to a fresh parser.
inline void LimitRequestParser(const HttpServerConfig& config, RequestParser* parser) {
  parser->header_limit(static_cast<uint32_t>(config.max_header_bytes));
  parser->body_limit(config.max_request_body_bytes);
}

// The request as handlers see it; `remote` is the peer's "address:port".
inline HttpRequest ToHttpRequest(boost::beast::http::request<boost::beast::http::string_body> msg,
                                 std::string remote) {
  HttpRequest request;
  request.method = std::string(msg.method_string());
  request.target = std::string(msg.target());
  SplitTarget(request.target, &request.path, &request.query);
  for (const auto& field : msg) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(msg.body());
  request.remote = std::move(remote);
  return request;
}

}  // namespace llmserve::frontend::http::internal
