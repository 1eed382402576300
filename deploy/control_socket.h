#pragma once
// ControlSocket: the launcher's control ROUTER (IPC on the head node), where
// frontends send the scale requests of POST /scale_elastic_ep. One thread
// (the launcher's main thread) owns it.

#include <zmq.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "proto/admin.pb.h"
#include "base/status.h"

namespace llmserve::deploy {

class ControlSocket {
 public:
  explicit ControlSocket(zmq::context_t& context) : socket_(context, zmq::socket_type::router) {}

  // Binds `address`; Unavailable when it cannot.
  Status Bind(const std::string& address);

  // A scale request that arrived within `timeout`, with the sender's identity
  // in `from`. A malformed one is answered 400 here and not returned.
  std::optional<proto::ScaleRequest> Receive(std::chrono::milliseconds timeout, std::string* from);

  // Answers the frontend `to`.
  void Reply(const std::string& to, const proto::ScaleResponse& response);

 private:
  zmq::socket_t socket_;
};

}  // namespace llmserve::deploy
