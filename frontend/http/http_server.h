#pragma once
// HttpServer: an HTTP/1.1 server (Boost.Asio + Boost.Beast, Beast kept inside
// connection.cc), plain or over TLS, with keep-alive, a fixed pool of I/O threads, one strand per
// connection, a request body limit (413), read/write timeouts, chunked
// streaming responses with client-disconnect detection, and a bounded graceful
// stop. Requests go to a Router; handlers answer through a thread-safe
// ResponseWriter (response_writer.h).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "frontend/http/router.h"
#include "frontend/http/tls_context.h"
#include "base/status_or.h"

namespace llmserve::frontend::http {

struct HttpServerConfig {
  std::string host = "127.0.0.1";  // address to listen on ("0.0.0.0" for all IPv4, "::" for all)
  uint16_t port = 0;                // 0 = an ephemeral port, see HttpServer::port()
  int num_io_threads = 2;           // threads running the event loop
  size_t max_request_body_bytes = 32u << 20;  // larger bodies get 413
  size_t max_header_bytes = 64u << 10;        // larger headers get 431
  // Time a connection may wait for (and read) the header of its next request;
  // an idle keep-alive connection is closed after it (uvicorn's is 5 s).
  std::chrono::milliseconds keep_alive_timeout{5000};
  std::chrono::milliseconds body_read_timeout{60000};  // time to read one request body
  std::chrono::milliseconds write_timeout{60000};      // time for one write to the client
  std::chrono::milliseconds shutdown_timeout{30000};   // Stop() waits this long for in-flight answers
  // A handler that has not begun its answer (Respond or BeginStream) this long
  // after the request arrived gets a 504 sent for it and its disconnect
  // callback run, so a stuck request is aborted; 0 = no limit (vLLM has none).
  std::chrono::milliseconds answer_timeout{0};
  int listen_backlog = 1024;                           // pending connections the kernel queues
  // Open connections kept at most; one more is answered 503 (plain HTTP) or
  // just closed (TLS), so a flood of idle connections cannot use up the
  // process's file descriptors while the keep-alive timeout runs.
  size_t max_connections = 4096;
  // SO_REUSEPORT: lets several processes (--api-server-count > 1) listen on one
  // port; the kernel spreads incoming connections across them.
  bool reuse_port = false;
  TlsOptions tls;  // with a certificate, every connection is HTTPS
};

class HttpServer {
 public:
  // Binds, listens and starts the I/O threads; an error if the address cannot be bound.
  static StatusOr<std::unique_ptr<HttpServer>> Start(HttpServerConfig config, Router router);

  // Stops (gracefully, bounded by shutdown_timeout) if Stop() was not called.
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port actually listened on (the ephemeral one when config.port was 0).
  uint16_t port() const;

  // Stops accepting, closes idle connections, lets in-flight answers finish for
  // up to shutdown_timeout, then closes the rest (their disconnect callbacks run)
  // and joins the I/O threads. Idempotent; must not be called from an I/O thread.
  void Stop();

  // Open connections right now (for tests and metrics).
  size_t num_connections() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmserve::frontend::http
