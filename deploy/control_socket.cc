#include "deploy/control_socket.h"

#include <glog/logging.h>

#include "deploy/elastic_plan.h"

namespace llmserve::deploy {

Status ControlSocket::Bind(const std::string& address) {
  try {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind(address);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("cannot bind the control socket " + address + ": " + e.what());
  }
  return Status::Ok();
}

std::optional<proto::ScaleRequest> ControlSocket::Receive(std::chrono::milliseconds timeout, std::string* from) {
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  try {
    if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
    zmq::message_t identity, body;
    if (!socket_.recv(identity, zmq::recv_flags::dontwait) || !identity.more()) return std::nullopt;
    (void)socket_.recv(body);
    while (body.more()) (void)socket_.recv(body);
    *from = identity.to_string();
    proto::ScaleRequest request;
    if (!request.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
      Reply(*from, MakeScaleResponse(400, "malformed scale request", 0));
      return std::nullopt;
    }
    return request;
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "launcher: control socket error: " << e.what();
    return std::nullopt;
  }
}

void ControlSocket::Reply(const std::string& to, const proto::ScaleResponse& response) {
  const std::string bytes = response.SerializeAsString();
  try {
    socket_.send(zmq::buffer(to), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "launcher: cannot answer a scale request: " << e.what();
  }
}

}  // namespace llmserve::deploy
