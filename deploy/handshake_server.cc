#include "deploy/handshake_server.h"

#include <glog/logging.h>

#include "common/ipc/cluster_key.h"

namespace llmserve::deploy {

HandshakeServer::HandshakeServer(zmq::context_t& context, proto::HandshakeReply reply_template)
    : context_(context), socket_(context, zmq::socket_type::router), reply_template_(std::move(reply_template)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::router_mandatory, 1);
}

Status HandshakeServer::Bind(const std::string& address) {
  LLMSERVE_RETURN_IF_ERROR(common::ipc::SecureTcpSocket(socket_, address, common::ipc::SocketMode::kBind));
  try {
    socket_.bind(address);
    address_ = socket_.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("cannot bind the handshake socket on " + address + ": " + e.what());
  }
  auto refusals = common::ipc::WatchRefusedPeers(context_, socket_, address, "the handshake socket " + address_);
  if (!refusals.ok()) return refusals.status();
  refusals_ = std::move(*refusals);
  return Status::Ok();
}

void HandshakeServer::Expect(uint32_t rank, bool local) {
  Engine& e = engines_[rank];
  e.local = local;
  e.state = State::kNew;
  auto held = held_.find(rank);
  if (held == held_.end()) return;
  HeldHello hello = std::move(held->second);
  held_.erase(held);
  if (Status s = Welcome(rank, hello.identity, hello.hello, e); !s.ok()) LOG(ERROR) << "handshake: " << s.message();
  else LOG(INFO) << "handshake: admitted the waiting engine rank " << rank;
}

void HandshakeServer::Forget(uint32_t rank) {
  engines_.erase(rank);
  held_.erase(rank);
}

Status HandshakeServer::Welcome(uint32_t rank, const std::string& identity, const proto::Hello& hello,
                                Engine& engine) {
  if (hello.data_parallel_rank() != rank)
    return Status::InvalidArgument("HELLO names rank " + std::to_string(hello.data_parallel_rank()) +
                                   " but came from rank " + std::to_string(rank));
  if (hello.local() != engine.local)
    return Status::InvalidArgument("engine rank " + std::to_string(rank) + " reports itself " +
                                   (hello.local() ? "local" : "remote") + " but is expected " +
                                   (engine.local ? "local" : "remote"));
  if (hello.headless() && engine.local)
    return Status::InvalidArgument("engine rank " + std::to_string(rank) + " is headless but expected local");
  if (engine.state != State::kNew)
    LOG(WARNING) << "engine rank " << rank << " said HELLO again: it restarted; handshaking anew";
  proto::HandshakeMessage reply;
  *reply.mutable_reply() = reply_template_;
  reply.mutable_reply()->mutable_config()->mutable_parallel()->set_data_parallel_rank(rank);
  std::string bytes = reply.SerializeAsString();
  try {
    socket_.send(zmq::buffer(identity), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("cannot answer engine rank " + std::to_string(rank) + ": " + e.what());
  }
  engine.state = State::kConnected;
  return Status::Ok();
}

Status HandshakeServer::Handle(const std::string& identity, const zmq::message_t& body,
                               std::vector<uint32_t>* became_ready) {
  if (identity.size() != 2) return Status::InvalidArgument("handshake from a peer with a malformed identity");
  const uint32_t rank = static_cast<uint8_t>(identity[0]) | (static_cast<uint8_t>(identity[1]) << 8);
  proto::HandshakeMessage msg;
  if (!msg.ParseFromArray(body.data(), static_cast<int>(body.size())))
    return Status::DataLoss("malformed handshake message from rank " + std::to_string(rank));
  auto it = engines_.find(rank);
  if (it == engines_.end()) {
    if (!msg.has_hello())
      return Status::InvalidArgument("engine rank " + std::to_string(rank) + " is not part of this deployment");
    if (!held_.count(rank))
      LOG(INFO) << "handshake: engine rank " << rank
                << " is not part of this deployment (yet); it waits until a scale-up admits it";
    held_[rank] = HeldHello{identity, msg.hello()};
    return Status::Ok();
  }
  Engine& engine = it->second;
  if (msg.has_hello()) return Welcome(rank, identity, msg.hello(), engine);
  if (msg.has_ready()) {
    if (engine.state != State::kConnected)
      return Status::InvalidArgument("engine rank " + std::to_string(rank) + " said READY before HELLO");
    engine.state = State::kReady;
    became_ready->push_back(rank);
    return Status::Ok();
  }
  return Status::InvalidArgument("unexpected handshake message from rank " + std::to_string(rank));
}

std::vector<uint32_t> HandshakeServer::PollOnce(std::chrono::milliseconds timeout) {
  std::vector<uint32_t> became_ready;
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  try {
    if (zmq::poll(&item, 1, timeout) == 0) return became_ready;
    while (true) {
      zmq::message_t identity, body;
      if (!socket_.recv(identity, zmq::recv_flags::dontwait)) break;
      if (!identity.more()) continue;
      (void)socket_.recv(body);
      while (body.more()) (void)socket_.recv(body);  // ignore extra frames
      Status s = Handle(identity.to_string(), body, &became_ready);
      if (!s.ok()) LOG(ERROR) << "handshake: " << s.message();
    }
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "handshake socket error: " << e.what();
  }
  return became_ready;
}

std::vector<uint32_t> HandshakeServer::ReadyRanks() const {
  std::vector<uint32_t> ranks;
  for (const auto& [rank, e] : engines_)
    if (e.state == State::kReady) ranks.push_back(rank);
  return ranks;
}

std::string HandshakeServer::MissingDescription() const {
  std::string out;
  for (const auto& [rank, e] : engines_) {
    if (e.state == State::kReady) continue;
    if (!out.empty()) out += "; ";
    out += "rank " + std::to_string(rank) + (e.local ? "" : " (remote)") + ": " +
           (e.state == State::kNew ? "has not connected" : "connected, loading the model");
  }
  return out;
}

Status HandshakeServer::WaitForEngines(std::chrono::milliseconds timeout,
                                       std::chrono::milliseconds progress_interval,
                                       const std::function<void(const std::string&)>& progress) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  auto next_progress = Clock::now() + progress_interval;
  while (ReadyRanks().size() < engines_.size()) {
    const auto now = Clock::now();
    if (now >= deadline)
      return Status::Unavailable("engines did not become ready within " +
                                 std::to_string(timeout.count()) + " ms: " + MissingDescription());
    if (now >= next_progress) {
      progress("waiting for engines: " + MissingDescription());
      next_progress = now + progress_interval;
    }
    auto wait = std::min(deadline, next_progress) - now;
    PollOnce(std::chrono::duration_cast<std::chrono::milliseconds>(wait) + std::chrono::milliseconds(1));
  }
  return Status::Ok();
}

}  // namespace llmserve::deploy
