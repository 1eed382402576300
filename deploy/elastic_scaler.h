#pragma once
// ElasticScaler: the launcher's side of POST /scale_elastic_ep. The launcher
// owns the deployment's membership; a scale runs on its main thread while
// `tick` keeps the handshake, the control socket and process reaping going.
//
// Scale up n -> N: publish {0..n-1, scaling}; for each new rank admit a
// headless engine whose HELLO is held, else spawn a local engine; wait for
// every new rank's READY (bounded by the engine ready timeout; on failure the
// started ones are stopped and the answer is 500); publish {0..N-1}.
// Scale down n -> N: publish {0..N-1, scaling} (frontends stop routing to
// ranks >= N); wait, up to the drain timeout, until the coordinator shows
// those ranks with no waiting or running request (408 past it, but the scale
// still completes); stop them: SIGTERM to local engines (they drain), a DRAIN
// relayed by the coordinator to remote ones; publish {0..N-1}.
// Existing ranks and frontends keep serving throughout.

#include <chrono>
#include <deque>
#include <functional>
#include <set>
#include <string>

#include "base/status.h"
#include "deploy/coordinator_link.h"
#include "deploy/elastic_plan.h"
#include "deploy/handshake_server.h"
#include "deploy/supervised_children.h"

namespace llmserve::deploy {

struct ElasticScalerContext {
  SupervisedChildren* children = nullptr;
  HandshakeServer* handshake = nullptr;
  CoordinatorLink* coordinator = nullptr;
  // Spawns the local engine for `rank` (child ChildId::Engine(rank)).
  std::function<Status(uint32_t rank)> spawn_local_engine;
  // Serves the handshake and the control socket for ~`timeout` and reaps
  // child exits into `exits` (the supervisor handles the ones the scaler leaves).
  std::function<void(std::chrono::milliseconds timeout)> tick;
  std::deque<SupervisedExit>* exits = nullptr;
  // True when the scale must give up: the launcher is shutting down or a
  // process other than an engine died (the supervisor then ends the deployment).
  std::function<bool()> should_stop;
  std::chrono::milliseconds engine_ready_timeout{600000};
  std::chrono::milliseconds engine_stop_grace{35000};  // SIGTERM -> SIGKILL for removed engines
  uint32_t max_size = 256;                              // largest size a scale may ask for
};

class ElasticScaler {
 public:
  ElasticScaler(ElasticScalerContext context, uint32_t size) : ctx_(std::move(context)), size_(size) {}

  // Runs one scale to completion and returns the answer for the frontend.
  proto::ScaleResponse Scale(const proto::ScaleRequest& request);

  // The data-parallel size in effect.
  uint32_t size() const { return size_; }

  // Whether the exit of child `id` is an engine this scaler stopped (or gave
  // up starting): not a failure, not to be restarted. Consumes the expectation.
  bool ExpectedExit(const ChildId& id);

 private:
  proto::ScaleResponse ScaleUp(const ScaleStep& step);
  proto::ScaleResponse ScaleDown(const ScaleStep& step, std::chrono::seconds drain_timeout);
  // Publishes a membership and waits (bounded) until a snapshot carries it.
  void Publish(const std::vector<uint32_t>& active, bool scaling, uint32_t tracked);
  // Stops local engines `ranks` (SIGTERM, SIGKILL after the grace) and waits for their exits.
  void StopLocal(const std::vector<uint32_t>& ranks);
  // Takes the exit of the engine of `rank` out of `exits`, if it is there.
  std::optional<SupervisedExit> TakeExit(uint32_t rank);

  ElasticScalerContext ctx_;
  uint32_t size_;
  uint64_t epoch_ = 0;
  std::set<uint32_t> expected_exits_;     // engines stopped on purpose, not yet reaped by the supervisor
  std::set<uint32_t> remote_;             // ranks admitted from held HELLOs (other nodes)
};

}  // namespace llmserve::deploy
