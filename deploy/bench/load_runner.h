#pragma once
// The HTTP side of `llmserve bench serve`: sends POST requests with streamed
// (text/event-stream) responses to an OpenAI-compatible server at scheduled
// times, at most `max_concurrency` at once, and times every token chunk.
//
// One Asio thread runs everything with Boost.Beast's asynchronous client: a
// timer releases requests at their arrival times into a FIFO, a request leaves
// the FIFO when a concurrency slot is free, and each request takes an idle
// keep-alive connection or opens a new one (a request that fails on a reused
// connection before any response byte is retried once on a fresh one). Every
// request has a deadline (`request_timeout_s`); the whole run has an optional
// one (`max_duration_s`) after which requests still in flight are cut off and
// requests not yet sent are recorded as failed.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "deploy/bench/metrics.h"
#include "deploy/bench/stream_accumulator.h"
#include "base/status_or.h"

namespace llmserve::deploy::bench {

// Where the server is: parsed from --base-url (http only).
struct Endpoint {
  std::string host;         // name or address
  std::string port = "80";  // service
  std::string base_path;    // path prefix before the endpoint, no trailing '/'
};

// Parses "http://host[:port][/prefix]".
StatusOr<Endpoint> ParseBaseUrl(const std::string& url);

// One request to send.
struct LoadRequest {
  std::string target;   // path, e.g. "/v1/completions"
  std::string body;     // JSON body (asks for a stream)
  int64_t prompt_len;   // the dataset's token count, kept unless the server's usage says otherwise
  double arrival_s;     // when it may be sent, seconds after the start
  std::string request_id = "";  // sent as x-request-id when not empty
};

// How to run the load.
struct LoadOptions {
  ApiKind api = ApiKind::kCompletions;       // how to read the stream
  size_t max_concurrency = 0;                 // 0 = no limit
  double request_timeout_s = 600;             // per request, from send to the end of the stream
  double max_duration_s = 0;                  // whole run; 0 = no limit
  std::vector<std::pair<std::string, std::string>> headers;  // extra HTTP headers
  std::function<void(size_t done, size_t total)> on_progress;  // after each request ends (Asio thread)
};

// The outcome of a run.
struct LoadResult {
  std::vector<RequestOutput> outputs;  // one per request, in request order
  double duration_s = 0;               // from the start to the end of the last request
};

// Runs all `requests` against `endpoint`. Fails only when the host cannot be
// resolved; request-level failures are recorded in the outputs.
StatusOr<LoadResult> RunLoad(const Endpoint& endpoint, const std::vector<LoadRequest>& requests,
                             const LoadOptions& options);

// GET `target` and return the body of a 200 response (e.g. /v1/models).
StatusOr<std::string> HttpGet(const Endpoint& endpoint, const std::string& target, double timeout_s);

}  // namespace llmserve::deploy::bench
