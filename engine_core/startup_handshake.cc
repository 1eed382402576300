#include "engine_core/startup_handshake.h"

#include "common/ipc/cluster_key.h"

namespace llmserve::engine_core {

std::string EngineIdentity(uint32_t rank) {
  return std::string{static_cast<char>(rank & 0xff), static_cast<char>((rank >> 8) & 0xff)};
}

StatusOr<std::unique_ptr<StartupHandshake>> StartupHandshake::Connect(
    zmq::context_t& context, const std::string& address, uint32_t rank, bool local, bool headless,
    std::chrono::milliseconds timeout) {
  try {
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::routing_id, EngineIdentity(rank));
    socket.set(zmq::sockopt::linger, 5000);
    LLMSERVE_RETURN_IF_ERROR(common::ipc::SecureTcpSocket(socket, address, common::ipc::SocketMode::kConnect));
    socket.connect(address);
    proto::HandshakeMessage hello;
    hello.mutable_hello()->set_data_parallel_rank(rank);
    hello.mutable_hello()->set_local(local);
    hello.mutable_hello()->set_headless(headless);
    socket.send(zmq::buffer(hello.SerializeAsString()), zmq::send_flags::none);

    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) == 0) {
      socket.set(zmq::sockopt::linger, 0);  // drop the unanswered HELLO on close
      return Status::Unavailable("no handshake reply from the frontend at " + address + " within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    zmq::message_t msg;
    (void)socket.recv(msg);
    proto::HandshakeMessage reply;
    if (!reply.ParseFromArray(msg.data(), static_cast<int>(msg.size())) || !reply.has_reply())
      return Status::DataLoss("malformed handshake reply from " + address);
    std::unique_ptr<StartupHandshake> h(new StartupHandshake(std::move(socket), rank, local, headless));
    h->reply_ = reply.reply();
    return h;
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("handshake with " + address + " failed: " + e.what());
  }
}

Status StartupHandshake::SendReady(uint64_t config_hash) {
  proto::HandshakeMessage ready;
  ready.mutable_ready()->set_data_parallel_rank(rank_);
  ready.mutable_ready()->set_local(local_);
  ready.mutable_ready()->set_headless(headless_);
  ready.mutable_ready()->set_config_hash(config_hash);
  try {
    socket_.send(zmq::buffer(ready.SerializeAsString()), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("sending READY failed: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace llmserve::engine_core
