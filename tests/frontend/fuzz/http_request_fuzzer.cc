// libFuzzer target over the frontend's HTTP/1.1 request reading: the input
// is what a client sends on one connection (request lines, headers,
// Content-Length or chunked bodies, pipelined requests). It goes through the
// server's Beast parser with the server's limits (beast_request.h), once in
// one piece and once in pieces, as TCP may deliver it; every request parsed
// becomes the handlers' HttpRequest and is routed (CORS, X-Request-Id, an
// API-key filter, 404 / 405). Asserts: the pieces give the same requests and
// the same end (or both an error) as the whole, up to two Beast quirks
// described below; a body never exceeds the limit; path and query rejoin to
// the target; no response header holds CR, LF or NUL (an echoed Origin or
// X-Request-Id cannot split the response).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http.hpp>

#include "frontend/http/beast_request.h"
#include "frontend/http/router.h"
#include "tests/fuzz_require.h"

namespace llmserve::frontend::http::fuzz {

namespace bhttp = boost::beast::http;

using llmserve::testing::FuzzRequire;

bool SafeHeaderText(const std::string& s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos;
}

// Collects what a handler or the router answers.
class RecordingWriter final : public ResponseWriter {
 public:
  void Respond(HttpResponse response) override {
    Check(response.headers);
    finished_ = true;
  }
  void BeginStream(int, std::string, Headers headers) override { Check(headers); }
  void Write(std::string) override {}
  void End() override { finished_ = true; }
  bool closed() const override { return false; }
  bool finished() const override { return finished_; }
  void OnDisconnect(std::function<void()>) override {}
  size_t pending_bytes() const override { return 0; }

 private:
  static void Check(const Headers& headers) {
    for (const auto& [name, value] : headers) {
      FuzzRequire(!name.empty() && SafeHeaderText(name) && SafeHeaderText(value), "response header with CR/LF/NUL");
    }
  }
  bool finished_ = false;
};

const Router& TheRouter() {
  static const Router* router = [] {
    auto* r = new Router();
    auto answer = [](HttpRequest request, std::shared_ptr<ResponseWriter> writer) {
      writer->Respond(HttpResponse::Make(200, "application/json", request.body));
    };
    r->Add("POST", "/v1/completions", answer);
    r->Add("GET", "/v1/models", answer);
    r->Add("GET", "/health", answer);
    r->AddFilter("/v1/", [](const HttpRequest& request) -> std::optional<HttpResponse> {
      const std::string* key = request.header("authorization");
      if (key != nullptr && *key == "Bearer k") return std::nullopt;
      return HttpResponse::Make(401, "application/json", "{}");
    });
    CorsPolicy cors;
    cors.allowed_origins = {"https://a.example", "null"};
    cors.allowed_headers = {"authorization", "x-api-key"};
    cors.allow_credentials = true;
    r->set_cors(cors);
    r->set_request_id_headers(true);
    return r;
  }();
  return *router;
}

// One parsed request as text, to compare the runs.
std::string Describe(const bhttp::request<bhttp::string_body>& msg) {
  std::string s = std::string(msg.method_string()) + " " + std::string(msg.target()) + " " +
                  std::to_string(msg.version()) + (msg.keep_alive() ? " keep-alive" : " close") + "\n";
  for (const auto& field : msg) s += std::string(field.name_string()) + ": " + std::string(field.value()) + "\n";
  return s + "body " + std::to_string(msg.body().size()) + ": " + msg.body();
}

// Reads `stream` as the server does, handing the parser `piece` bytes more
// each time it needs more (0: all at once). Returns one entry per request
// parsed and a last one for the error or end of stream that stops reading.
std::vector<std::string> ReadStream(std::string_view stream, size_t piece, const HttpServerConfig& config) {
  std::vector<std::string> events;
  std::string buffer;
  size_t fed = 0;
  std::optional<internal::RequestParser> parser;
  auto fresh = [&] {
    parser.emplace();
    internal::LimitRequestParser(config, &*parser);
    parser->eager(true);
  };
  fresh();
  for (int rounds = 0; rounds < 100000; ++rounds) {
    boost::beast::error_code ec;
    size_t used = 0;
    if (!buffer.empty()) used = parser->put(boost::asio::buffer(buffer.data(), buffer.size()), ec);
    buffer.erase(0, used);
    if (ec && ec != bhttp::error::need_more) {
      events.push_back("error: " + ec.message());
      return events;
    }
    if (parser->is_done()) {
      bhttp::request<bhttp::string_body> msg = parser->release();
      FuzzRequire(msg.body().size() <= config.max_request_body_bytes, "body over the limit");
      events.push_back(Describe(msg));
      HttpRequest request = internal::ToHttpRequest(std::move(msg), "127.0.0.1:1");
      FuzzRequire(request.query.empty() ? request.target == request.path || request.target == request.path + "?"
                                        : request.target == request.path + "?" + request.query,
                  "path and query do not rejoin to the target");
      auto writer = std::make_shared<RecordingWriter>();
      TheRouter().Dispatch(std::move(request), writer);
      FuzzRequire(writer->finished(), "request not answered");
      if (events.size() >= 8) return events;
      fresh();
      continue;
    }
    if (used > 0 && !ec) continue;  // more to parse in the buffer
    if (fed == stream.size()) {     // the client half-closed
      if (parser->got_some()) {
        parser->put_eof(ec);
        events.push_back(ec ? "eof: " + ec.message() : "eof");
      } else {
        events.push_back("end of stream");
      }
      return events;
    }
    const size_t n = piece == 0 ? stream.size() - fed : std::min(piece, stream.size() - fed);
    buffer.append(stream.substr(fed, n));
    fed += n;
  }
  FuzzRequire(false, "the parser made no progress");
  return events;
}

}  // namespace llmserve::frontend::http::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = llmserve::frontend::http::fuzz;
  if (size < 1) return 0;
  // Byte 0: the limits (the server's defaults, or small ones the input can
  // reach) and the piece size of the second run.
  llmserve::frontend::http::HttpServerConfig config;
  if (data[0] & 1) config.max_header_bytes = 256;
  if (data[0] & 2) config.max_request_body_bytes = 100;
  const size_t piece = 1 + (data[0] >> 2) % 23;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<std::string> whole = f::ReadStream(stream, 0, config);
  const std::vector<std::string> pieces = f::ReadStream(stream, piece, config);
  // Where Beast (1.74) depends on the pieces, both outcomes refuse or both
  // are bounded, so these differences are allowed:
  //  - It parses an unfinished header field by field when it has the bytes
  //    and waits for its end once it has asked for more, so a stream that
  //    ends inside a malformed header may end in "bad field" (400) whole and
  //    in "partial message" (close) in pieces.
  //  - Given a whole header at once it holds the request line and the fields
  //    each to the header limit; once it has asked for more, the whole header.
  //    So a header between 1 and 2 times the limit may be read in one run and
  //    refused (431) in the other; the requests before it must match.
  auto failed = [](const std::string& e) { return e.rfind("error: ", 0) == 0 || e.rfind("eof: ", 0) == 0; };
  auto limit_split = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    return a.back() == "error: header limit exceeded" && b.size() >= a.size() &&
           std::equal(a.begin(), a.end() - 1, b.begin());
  };
  const bool same = !whole.empty() && !pieces.empty() &&
                    ((whole.size() == pieces.size() && std::equal(whole.begin(), whole.end() - 1, pieces.begin()) &&
                      (whole.back() == pieces.back() || (failed(whole.back()) && failed(pieces.back())))) ||
                     limit_split(whole, pieces) || limit_split(pieces, whole));
  if (!same) {
    for (const auto& e : whole) std::fprintf(stderr, "whole: %s\n", e.c_str());
    for (const auto& e : pieces) std::fprintf(stderr, "piece %zu: %s\n", piece, e.c_str());
    f::FuzzRequire(false, "reading in pieces differs from reading the whole");
  }
  return 0;
}
