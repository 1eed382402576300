#pragma once
// CURVE on the TCP sockets between nodes (with --cluster-key-dir): socket
// options for both ends, the ZAP handler that admits only holders of the
// cluster key, and a monitor that logs refused handshakes. IPC and inproc
// sockets never use CURVE: they are local-only by construction.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "common/ipc/curve_keys.h"
#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

// Makes `socket` a CURVE server (it will bind): clients must know the
// cluster key. Call before bind().
Status ApplyCurveServer(zmq::socket_t& socket, const CurveKeyPair& cluster_key);

// Makes `socket` a CURVE client (it will connect) presenting the cluster key.
// Call before connect().
Status ApplyCurveClient(zmq::socket_t& socket, const CurveKeyPair& cluster_key);

// The ZAP handler of one ZeroMQ context: every CURVE server socket of that
// context asks it about each connecting client; it admits only the cluster's
// public key and logs every refusal. Destroy it before the context.
class ZapAuthenticator {
 public:
  static StatusOr<std::unique_ptr<ZapAuthenticator>> Start(zmq::context_t& context,
                                                           const CurveKeyPair& cluster_key);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  // Clients refused so far (right server key, wrong client key).
  int64_t refused() const { return refused_.load(); }

 private:
  ZapAuthenticator(zmq::socket_t socket, std::string allowed_key);
  void Run();

  zmq::socket_t socket_;      // REP on inproc://zeromq.zap.01
  std::string allowed_key_;   // 32-byte binary public key
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> refused_{0};
  std::thread thread_;
};

// Logs every failed handshake on one server socket (a peer with another
// deployment's key, or none, never reaches the ZAP handler: its CURVE HELLO
// cannot be decrypted). Destroy it before the socket.
class HandshakeFailureLog {
 public:
  // `name` says which socket in the log line ("handshake ROUTER").
  static StatusOr<std::unique_ptr<HandshakeFailureLog>> Start(zmq::context_t& context, zmq::socket_t& socket,
                                                              std::string name);
  ~HandshakeFailureLog();
  HandshakeFailureLog(const HandshakeFailureLog&) = delete;
  HandshakeFailureLog& operator=(const HandshakeFailureLog&) = delete;

  // Failed handshakes seen so far.
  int64_t failures() const { return failures_.load(); }

 private:
  HandshakeFailureLog(zmq::socket_t& watched, zmq::socket_t monitor, std::string name);
  void Run();

  zmq::socket_t* watched_;
  zmq::socket_t monitor_;  // PAIR connected to the watched socket's monitor
  std::string name_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> failures_{0};
  std::thread thread_;
};

}  // namespace llmserve::common::ipc
