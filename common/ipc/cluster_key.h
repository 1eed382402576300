#pragma once
// This process's cluster key (--cluster-key-dir), installed once at startup
// before any socket exists. With a key, every TCP socket between nodes uses
// CURVE: the sites that bind or connect call SecureTcpSocket() first, and
// processes that bind TCP run a ZAP authenticator. Without one (the default,
// and always for ipc:// and inproc://) sockets are plain.

#include <memory>
#include <string>

#include <zmq.hpp>

#include "common/ipc/curve_auth.h"
#include "common/ipc/zmq_socket.h"
#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

// Reads DIR/cluster.key and makes it this process's key; an empty `dir`
// installs none. Call once, before any thread uses sockets.
Status InstallClusterKey(const std::string& dir);

// The installed key, or null.
const CurveKeyPair* ClusterKey();

// Makes `socket` a CURVE server (kBind) or client (kConnect) when a key is
// installed and `endpoint` is tcp://; otherwise does nothing.
Status SecureTcpSocket(zmq::socket_t& socket, const std::string& endpoint, SocketMode mode);

// With a key installed: the ZAP handler of `context` (start it before the
// first bind, keep it until the context's sockets are closed). Else null.
StatusOr<std::unique_ptr<ZapAuthenticator>> StartClusterAuthenticator(zmq::context_t& context);

// For a process that binds TCP sockets: InstallClusterKey(dir), then
// StartClusterAuthenticator(context). Errors name the flag.
StatusOr<std::unique_ptr<ZapAuthenticator>> SecureProcess(const std::string& dir, zmq::context_t& context);

// With a key installed and a tcp:// `endpoint`: a log of the handshakes
// `socket` refuses (peers with another key, or none). Else null.
StatusOr<std::unique_ptr<HandshakeFailureLog>> WatchRefusedPeers(zmq::context_t& context, zmq::socket_t& socket,
                                                                 const std::string& endpoint, std::string name);

}  // namespace llmserve::common::ipc
