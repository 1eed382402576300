#pragma once
// CoordinatorLink: the launcher's connection to the DP coordinator's frontend
// XPUB (IPC on the head node), like a frontend's: it sends FrontendNotices
// upstream (membership changes, ranks down, drains to relay to engines) and
// keeps the newest LoadSnapshot, which tells it when the coordinator applied a
// membership and whether removed ranks still have requests.

#include <zmq.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "proto/coordinator.pb.h"
#include "base/status.h"

namespace llmserve::deploy {

class CoordinatorLink {
 public:
  explicit CoordinatorLink(zmq::context_t& context) : socket_(context, zmq::socket_type::xsub) {}

  // Connects and subscribes to every snapshot.
  Status Connect(const std::string& address);

  // Sends `membership` (its epoch must be newer than the last one sent).
  void SendMembership(const proto::Membership& membership);
  // Tells the coordinator that `rank`'s process exited.
  void SendRankDown(uint32_t rank);
  // Asks the coordinator to tell engines `ranks` to drain and exit.
  void SendDrain(const std::vector<uint32_t>& ranks);

  // Reads every snapshot that arrived within `timeout`, keeping the newest.
  void Poll(std::chrono::milliseconds timeout);
  // The newest snapshot, if any.
  const std::optional<proto::LoadSnapshot>& latest() const { return latest_; }
  // When the newest snapshot arrived.
  std::chrono::steady_clock::time_point latest_at() const { return latest_at_; }

 private:
  void Send(const proto::FrontendNotice& notice);

  zmq::socket_t socket_;
  std::optional<proto::LoadSnapshot> latest_;
  std::chrono::steady_clock::time_point latest_at_;
};

}  // namespace llmserve::deploy
