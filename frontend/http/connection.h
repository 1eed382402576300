#pragma once
// Internal to the HTTP server (http_server.cc and connection.cc; not for
// other users): what the server shares with its connections, and the calls it
// makes on them. No Boost.Beast here: connection.cc is the only translation
// unit that includes Beast (each one that does is slow to build).

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>

#include "frontend/http/http_server.h"
#include "frontend/http/router.h"

namespace llmserve::frontend::http::internal {

class Connection;  // one client connection (connection.cc)

// State shared by the server, its connections and the writers they hand out.
struct SharedState {
  std::mutex post_mu;    // held while a writer posts to a strand
  bool running = true;   // the io_context may be posted to

  std::mutex registry_mu;
  std::condition_variable registry_cv;  // signalled when a connection goes away
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections;

  std::atomic<bool> stopping{false};  // graceful stop began: no keep-alive, no new work
};

// Serves an accepted socket (on a strand of its own) until the connection
// closes; it registers in `state` meanwhile. `router` and `config` must outlive it.
void ServeConnection(boost::asio::ip::tcp::socket socket, const Router* router, const HttpServerConfig* config,
                     std::shared_ptr<SharedState> state);

// Posts to every open connection: close unless a request is being answered
// (graceful stop), or, with `force`, close and abort the exchange in progress.
void CloseConnections(SharedState& state, bool force);

}  // namespace llmserve::frontend::http::internal
