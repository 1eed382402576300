#pragma once
// Supervisor: the life of one `llmserve serve` node, in four phases.
//
//  1. plan: LaunchPlan says which children this node runs (coordinator,
//     frontends, local engines; a headless node only engines) and their
//     command lines;
//  2. spawn: the head node binds the startup handshake (engines learn the
//     frontends' addresses and the configuration from it), then every child
//     starts, each under a typed ChildId;
//  3. wait until ready: every DP rank, local or on another node, reports READY
//     within the engine ready timeout; a child that exits meanwhile fails the
//     start (exit 1);
//  4. supervise: serve the handshake (restarted or late ranks), the elastic
//     scaling control socket and the coordinator link, and act on each child
//     exit by the rules of exit_policy.h, until SIGTERM/SIGINT (exit 0), a
//     failure that stops the deployment (exit 1), or a headless node whose
//     engines all left (exit 0).
// Then every child gets SIGTERM, and SIGKILL after the engines' drain timeout.
// Runs on the caller's thread.

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>

#include "deploy/control_socket.h"
#include "deploy/coordinator_link.h"
#include "deploy/elastic_scaler.h"
#include "deploy/handshake_server.h"
#include "deploy/launch_plan.h"
#include "deploy/supervised_children.h"

namespace llmserve::deploy {

class Supervisor {
 public:
  // Sockets use `context`; `stop` turns true on SIGTERM/SIGINT. Both outlive the supervisor.
  Supervisor(zmq::context_t& context, LaunchPlan plan, const std::atomic<bool>* stop);
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs the four phases and stops every child; returns the launcher's exit code.
  int Run();

 private:
  // Phase 2: binds the handshake (head node) and starts the plan's children.
  Status Spawn();
  // Phase 3: false (logged) when a child exits or the ranks are not ready in time.
  bool WaitUntilReady();
  // The coordinator link and, with an admin API key, the control socket and the scaler.
  Status StartElasticScaling();
  // Phase 4: returns the exit code.
  int Supervise();
  // Serves the sockets for up to ~100 ms and reaps child exits into exits_.
  void Tick();
  // Acts on one exit; false when the deployment must stop.
  bool HandleExit(const SupervisedExit& exit);
  // Starts child `id` again after a failure; false when it cannot.
  bool Restart(const ChildId& id);
  // The DP ranks in effect (changed by elastic scaling).
  int data_parallel_size() const;

  zmq::context_t& context_;
  const LaunchPlan plan_;
  const std::atomic<bool>* stop_;
  const std::chrono::milliseconds grace_;  // SIGTERM -> SIGKILL: the engines' drain timeout + 5 s
  SupervisedChildren children_;
  std::unique_ptr<HandshakeServer> handshake_;          // head node only
  std::unique_ptr<CoordinatorLink> coordinator_link_;   // with a coordinator
  std::unique_ptr<ControlSocket> control_;              // with elastic scaling
  std::unique_ptr<ElasticScaler> scaler_;               // with elastic scaling
  std::deque<SupervisedExit> exits_;                    // reaped, not yet handled
  bool finished_ = false;                               // a headless node whose engines all left
};

}  // namespace llmserve::deploy
