#include "deploy/coordinator_link.h"

#include <glog/logging.h>

namespace llmserve::deploy {

Status CoordinatorLink::Connect(const std::string& address) {
  try {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::rcvhwm, 0);
    socket_.connect(address);
    socket_.send(zmq::buffer(std::string("\x01", 1)), zmq::send_flags::none);  // subscribe to all
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("cannot connect to the DP coordinator at " + address + ": " + e.what());
  }
  return Status::Ok();
}

void CoordinatorLink::Send(const proto::FrontendNotice& notice) {
  const std::string bytes = notice.SerializeAsString();
  try {
    socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "launcher: cannot reach the DP coordinator: " << e.what();
  }
}

void CoordinatorLink::SendMembership(const proto::Membership& membership) {
  proto::FrontendNotice notice;
  *notice.mutable_membership() = membership;
  Send(notice);
}

void CoordinatorLink::SendRankDown(uint32_t rank) {
  proto::FrontendNotice notice;
  notice.set_rank_down(rank);
  Send(notice);
}

void CoordinatorLink::SendDrain(const std::vector<uint32_t>& ranks) {
  proto::FrontendNotice notice;
  for (uint32_t r : ranks) notice.mutable_drain()->add_data_parallel_ranks(r);
  Send(notice);
}

void CoordinatorLink::Poll(std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  try {
    if (zmq::poll(&item, 1, timeout) == 0) return;
    zmq::message_t msg;
    while (socket_.recv(msg, zmq::recv_flags::dontwait)) {
      proto::LoadSnapshot snap;
      if (msg.more() || !snap.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) continue;
      if (!latest_ || snap.sequence() > latest_->sequence()) {
        latest_ = std::move(snap);
        latest_at_ = std::chrono::steady_clock::now();
      }
    }
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "launcher: DP coordinator socket error: " << e.what();
  }
}

}  // namespace llmserve::deploy
