#pragma once
// ZeroMQ helpers with vLLM's socket conventions (make_zmq_socket): unlimited
// high-water marks (vLLM sets them on ROUTER/DEALER/PUSH/PULL; we also set them
// on PUB/SUB, whose queue limit silently drops messages) so the data plane never
// drops or blocks on a queue limit, a bounded linger so a process can always exit,
// XPUB_VERBOSE on publishers that count subscribers, IPv6 for tcp://[addr]
// endpoints. Every function catches zmq::error_t and returns a Status, so no
// exception leaves this API.

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "common/ipc/curve_keys.h"
#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

// Options of one socket; defaults follow vLLM.
struct SocketOptions {
  // ZMQ_LINGER in ms: how long close() may wait to flush unsent messages.
  int linger_ms = 0;
  // ZMQ_ROUTING_ID (DEALER identity); empty leaves ZeroMQ's default.
  std::string identity;
  // Overrides of ZMQ_SNDHWM / ZMQ_RCVHWM; unset means 0 (unlimited): queues
  // are bounded by our own protocols, and a PUB at its HWM silently drops.
  std::optional<int> send_hwm;
  std::optional<int> recv_hwm;
  // ZMQ_CONFLATE: keep only the newest message (wake-up notifications).
  bool conflate = false;
  // ZMQ_XPUB_VERBOSE: deliver every subscription message (readiness counting).
  bool xpub_verbose = false;
  // SUB only: subscription prefixes; a SUB with none subscribes to everything.
  std::vector<std::string> subscriptions;
  // The cluster key (--cluster-key-dir): when set, a tcp:// socket uses CURVE,
  // as server when it binds and as client when it connects. Other transports
  // ignore it. The caller keeps the key alive while MakeSocket runs.
  const CurveKeyPair* curve = nullptr;
};

// Whether MakeSocket binds or connects.
enum class SocketMode { kBind, kConnect };

// Creates a socket of `type`, applies `options` and binds or connects it to
// `endpoint` (tcp://host:port, tcp://[v6]:port, ipc://path, inproc://name).
// Binding to "tcp://host:*" picks a free port; LastEndpoint tells which.
StatusOr<zmq::socket_t> MakeSocket(zmq::context_t& context, zmq::socket_type type,
                                   const std::string& endpoint, SocketMode mode,
                                   const SocketOptions& options = {});

// The endpoint a socket was last bound to (ZMQ_LAST_ENDPOINT), with the real
// port when it was bound to ":*".
StatusOr<std::string> LastEndpoint(zmq::socket_t& socket);

// Binds `socket` to a free TCP port on `host` ("127.0.0.1", "::1", "0.0.0.0")
// and returns the full endpoint, e.g. "tcp://127.0.0.1:40123".
StatusOr<std::string> BindToFreePort(zmq::socket_t& socket, const std::string& host);

// The runtime directory for ipc:// endpoints: $LLMSERVE_RUNTIME_DIR, else
// $XDG_RUNTIME_DIR, else /tmp.
std::string RuntimeDir();

// A fresh, unique "ipc://DIR/llmserve-<tag>-<pid>-<random>" endpoint (the file
// does not exist yet). `dir` empty means RuntimeDir(). Fails if the path would
// exceed the 107-byte Unix socket limit.
StatusOr<std::string> MakeIpcEndpoint(std::string_view tag, const std::string& dir = "");

// Removes the socket file of an "ipc://PATH" endpoint (ZeroMQ 4.3 leaves it
// behind). Peers already connected keep their connections, so a binder may
// call this as soon as everyone has connected. No-op for other endpoints.
void RemoveIpcFile(const std::string& endpoint);

// Wraps a host for a tcp:// endpoint: IPv6 literals get brackets.
std::string TcpEndpoint(const std::string& host, int port);

// Sends the frames of one multipart message. With `dont_wait` a full queue is
// kResourceExhausted instead of blocking.
Status SendMultipart(zmq::socket_t& socket, std::span<const zmq::const_buffer> frames,
                     bool dont_wait = false);

// Sends one single-frame message.
Status SendBytes(zmq::socket_t& socket, std::string_view bytes, bool dont_wait = false);

// Receives one whole multipart message. timeout: nullopt blocks; zero polls.
// On timeout returns a status for which IsTimeout() is true.
StatusOr<std::vector<zmq::message_t>> RecvMultipart(
    zmq::socket_t& socket, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

// Builds the status every ipc:// timeout returns.
Status TimeoutError(std::string_view what);

// True for statuses made by TimeoutError (kUnavailable with a fixed prefix):
// lets callers tell "nothing yet" from "peer gone".
bool IsTimeout(const Status& status);

// Waits on several sockets and raw file descriptors (pipes, eventfds) at once.
// One owner thread, like the sockets it polls.
class Poller final {
 public:
  // Adds a socket polled for input; returns its index for Readable().
  size_t AddSocket(zmq::socket_t& socket);
  // Adds a file descriptor polled for input (POLLIN); returns its index.
  size_t AddFd(int fd);
  // Waits until an item is readable or `timeout` passes (nullopt: forever).
  // Returns how many items are readable; 0 means timed out.
  StatusOr<int> Wait(std::optional<std::chrono::milliseconds> timeout);
  // Whether item `index` was readable after the last Wait.
  bool Readable(size_t index) const;

 private:
  std::vector<zmq::pollitem_t> items_;
};

}  // namespace llmserve::common::ipc
