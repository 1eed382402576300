#pragma once
// Coordinator: the llmserve-coordinator process's sockets and loop around
// CoordinatorState (vLLM V1 §3). It binds three sockets:
//  * frontend XPUB: LoadSnapshot to every frontend; frontends' XSUB sends
//    FrontendNotice upstream on it (first request of an idle period), and so
//    does the launcher (membership changes, ranks down, drains to relay);
//  * engine XPUB: "READY" answers every engine subscription (so a restarted
//    engine hears it too), then START_DP_WAVE as [0x02][msgpack StartDpWave]
//    and ["DRAIN"][DrainCommand] for ranks leaving in an elastic scale-down;
//  * engine PULL: EngineReport (load after every step that changed it, wave notices).
// One thread (Run's caller) owns all three.

#include <zmq.hpp>

#include <atomic>
#include <memory>
#include <string>

#include "coordinator/coordinator_state.h"
#include "base/status_or.h"

namespace llmserve::coordinator {

// The frame a coordinator publishes to engines once they subscribed.
inline constexpr char kCoordinatorReady[] = "READY";
// First frame of a relayed DrainCommand (then its bytes): the named ranks leave.
inline constexpr char kDrainFrame[] = "DRAIN";

struct CoordinatorOptions {
  CoordinatorConfig state;
  std::string frontend_publish_bind = "tcp://127.0.0.1:*";  // XPUB to frontends
  std::string engine_publish_bind = "tcp://127.0.0.1:*";    // XPUB to engines
  std::string engine_stats_bind = "tcp://127.0.0.1:*";      // PULL from engines

  // InvalidArgument, naming the llmserve-coordinator flag, for a rank count or
  // publish intervals out of range.
  Status Validate() const;
};

class Coordinator {
 public:
  // Binds the three sockets; fails with a clear message when an address is taken.
  static StatusOr<std::unique_ptr<Coordinator>> Create(zmq::context_t& context, CoordinatorOptions options);
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Bound addresses (ports resolved).
  const std::string& frontend_publish_address() const { return frontend_publish_address_; }
  const std::string& engine_publish_address() const { return engine_publish_address_; }
  const std::string& engine_stats_address() const { return engine_stats_address_; }

  // Serves until `stop` becomes true (checked at least every 50 ms).
  Status Run(const std::atomic<bool>& stop);

  // The state (read it only while Run is not running).
  const CoordinatorState& state() const { return state_; }

 private:
  Coordinator(zmq::context_t& context, CoordinatorOptions options);
  void HandleFrontendMessages();
  void HandleEngineSubscriptions();
  void HandleEngineReports();
  void Broadcast(const proto::StartDpWave& wave);
  void Publish();

  CoordinatorOptions options_;
  CoordinatorState state_;
  zmq::socket_t frontend_pub_;  // XPUB
  zmq::socket_t engine_pub_;    // XPUB
  zmq::socket_t engine_pull_;   // PULL
  std::string frontend_publish_address_;
  std::string engine_publish_address_;
  std::string engine_stats_address_;
};

}  // namespace llmserve::coordinator
