#pragma once
// Internal to the HTTP server (http_server.cc, connection.cc and
// exchange_writer.cc; not for other users): what the server shares with its
// connections, the calls it makes on them, and what a connection's response
// writer calls on its strand. No Boost.Beast here: connection.cc is the only
// translation unit that includes Beast (each one that does is slow to build).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "frontend/http/http_server.h"
#include "frontend/http/response_writer.h"
#include "frontend/http/router.h"

namespace boost::asio::ssl {
class context;
}

namespace llmserve::frontend::http::internal {

class ConnectionBase;

// State shared by the server, its connections and the writers they hand out.
struct SharedState {
  std::mutex post_mu;    // held while a writer posts to a strand
  bool running = true;   // the io_context may be posted to

  std::mutex registry_mu;
  std::condition_variable registry_cv;  // signalled when a connection goes away
  std::unordered_map<const ConnectionBase*, std::weak_ptr<ConnectionBase>> connections;

  std::atomic<bool> stopping{false};  // graceful stop began: no keep-alive, no new work
};

// What a writer and its connection share about one request/response exchange.
struct Exchange {
  std::atomic<bool> closed{false};    // client gone or connection closed
  std::atomic<bool> finished{false};  // Respond() or End() called
  std::atomic<bool> streaming{false}; // BeginStream() called
  std::atomic<bool> completed{false}; // the whole answer reached the socket
  std::atomic<size_t> pending{0};     // bytes written by Write() not yet on the socket
};

// One client connection, plain TCP or TLS (connection.cc). Every call but
// executor() runs on the connection's strand.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  // The connection's strand.
  virtual boost::asio::any_io_executor executor() = 0;
  // Graceful stop: closes the connection unless a request is being answered.
  virtual void CloseIfIdle() = 0;
  // Forced stop: closes the connection, aborting an exchange in progress.
  virtual void ForceClose() = 0;
  // The writer's calls, each for exchange `ex` (ignored once it is over).
  virtual void DoRespond(const std::shared_ptr<Exchange>& ex, HttpResponse response) = 0;
  virtual void DoBeginStream(const std::shared_ptr<Exchange>& ex, int status, std::string content_type,
                             Headers headers) = 0;
  virtual void DoWrite(const std::shared_ptr<Exchange>& ex, std::string data) = 0;
  virtual void DoEnd(const std::shared_ptr<Exchange>& ex) = 0;
  virtual void DoSetOnDisconnect(const std::shared_ptr<Exchange>& ex, std::function<void()> callback) = 0;
};

// The ResponseWriter a handler answers exchange `exchange` of `connection`
// through (exchange_writer.cc).
std::shared_ptr<ResponseWriter> MakeExchangeWriter(std::weak_ptr<ConnectionBase> connection,
                                                   std::shared_ptr<Exchange> exchange,
                                                   std::shared_ptr<SharedState> state);

// Serves an accepted socket (on a strand of its own) until the connection
// closes; it registers in `state` meanwhile. With `tls` (not null) the
// connection speaks TLS, beginning with the handshake. `router`, `config`
// and `tls` must outlive it.
void ServeConnection(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls, const Router* router,
                     const HttpServerConfig* config, std::shared_ptr<SharedState> state);

// Posts to every open connection: close unless a request is being answered
// (graceful stop), or, with `force`, close and abort the exchange in progress.
void CloseConnections(SharedState& state, bool force);

}  // namespace llmserve::frontend::http::internal
