#pragma once
// EngineCoreProc: the engine process around an EngineCore (vLLM V1 §1.4).
// Three threads:
//  * input: a DEALER (identity = rank) connected to every frontend's ROUTER;
//    sends ReadyResponse first, then decodes ADD / ABORT / UTILITY into the
//    input queue, which the main loop drains before every step (so an abort
//    takes effect within one step);
//  * main (Run): applies inputs, steps while there is work, blocks on the
//    input queue when idle;
//  * output: a PUSH connected to every frontend's PULL; sends each step's
//    outputs to the frontend that owns them (client index).
// With a DP coordinator (its addresses in the handshake reply) the input
// thread also SUBscribes to it (waits for READY before announcing itself,
// then receives START_DP_WAVE) and the output thread PUSHes the
// CoordinatorReporter's load and wave reports to it.
// SIGTERM drains: new requests are refused with an abort output, in-flight
// ones run to completion up to the shutdown timeout. A coordinator
// ["DRAIN"][DrainCommand] naming this rank (elastic scale-down) does the same.

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "base/blocking_queue.h"
#include "engine_core/coordinator_reporter.h"
#include "engine_core/engine_core.h"
#include "engine_core/step_overhead.h"
#include "proto/handshake.pb.h"
#include "proto/messages.h"

namespace llmserve::engine_core {

struct EngineProcOptions {
  uint32_t rank = 0;
  bool local = true;
  bool headless = false;
  std::chrono::milliseconds shutdown_timeout{30000};  // drain bound on SIGTERM
  proto::CacheConfig cache;  // the cache configuration the engine runs with, sent in its ReadyResponse
};

class EngineCoreProc {
 public:
  // `addresses` come from the handshake reply; `core` is ready to step.
  EngineCoreProc(zmq::context_t& context, EngineProcOptions options, proto::EngineAddresses addresses,
                 std::unique_ptr<EngineCore> core, uint32_t max_model_len);
  ~EngineCoreProc();
  EngineCoreProc(const EngineCoreProc&) = delete;
  EngineCoreProc& operator=(const EngineCoreProc&) = delete;

  // Starts the I/O threads and sends ReadyResponse on every input socket.
  Status Start();

  // The main loop; returns when a drain finished or the engine failed
  // (then ENGINE_CORE_DEAD went to every frontend). Returns the exit status.
  Status Run();

  // Begins a graceful drain (safe to call from any thread, e.g. a signal thread).
  void RequestShutdown() {
    shutdown_requested_ = true;
    inputs_.Push(Input{});
    { std::lock_guard<std::mutex> lock(announce_mu_); }
    announce_cv_.notify_all();
  }

  // Blocks until the input thread has sent ReadyResponse to every frontend
  // (true), or gave up or a shutdown was requested first (false). The engine
  // says READY to the launcher only after this, so that when an elastic
  // scale-up answers, the frontends can already route to the new rank.
  bool WaitUntilAnnounced();

 private:
  // One decoded message from a frontend (monostate: a wake-up).
  struct Utility {
    proto::UtilityRequest request;
  };
  struct Abort {
    std::vector<std::string> ids;
  };
  struct StartWave {
    proto::StartDpWave start;
  };
  using Input = std::variant<std::monostate, proto::EngineCoreRequest, Abort, Utility, StartWave>;
  // One message for the output thread: outputs for a client, the death
  // signal, or (coordinator_report non-empty) an EngineReport for the coordinator.
  struct Output {
    int32_t client_index = 0;
    proto::EngineCoreOutputs outputs;
    bool dead = false;
    std::string coordinator_report;
  };

  void InputLoop();
  // The input thread's setup: subscribes to the coordinator (waiting for its
  // READY) and connects to every frontend, sending each the ReadyResponse
  // (`*ready_bytes`). False when the thread should end (stopped, or a socket
  // error, after which the main loop is woken).
  bool ConnectInputs(std::vector<zmq::socket_t>* sockets, std::optional<zmq::socket_t>* coordinator,
                     std::string* ready_bytes);
  // Drains the coordinator's SUB socket: wave starts and drain commands.
  void ReceiveFromCoordinator(zmq::socket_t& coordinator);
  // Drains one frontend's DEALER socket: requests, aborts and utility calls.
  void ReceiveFromFrontend(zmq::socket_t& socket, const std::string& ready_bytes);
  void OutputLoop();
  void HandleInput(Input input);
  void HandleUtility(const proto::UtilityRequest& request);
  void SendAbortOutput(const proto::EngineCoreRequest& request, const std::string& why);
  // Waits for the coordinator's READY on `sub` (false: stopped first).
  bool AwaitCoordinatorReady(zmq::socket_t& sub);
  // Waits until `socket` (ZMQ_IMMEDIATE) has a connection to send on (false: stopped first).
  bool AwaitConnected(zmq::socket_t& socket, const std::string& address);
  // Queues `report` for the coordinator.
  void SendToCoordinator(const proto::EngineReport& report);
  // Reports load changes and wave completion after input handling or a step.
  void ReportToCoordinator();
  // Sends what an engine that went idle without a step owes its frontends
  // (aborted ids, stats showing no running request).
  void PublishIdleOutputs();

  zmq::context_t& context_;
  EngineProcOptions options_;
  proto::EngineAddresses addresses_;
  std::unique_ptr<EngineCore> core_;
  uint32_t max_model_len_;
  bool has_coordinator_ = false;  // a coordinator address came with the handshake
  CoordinatorReporter reporter_;  // main thread only
  uint64_t requests_added_ = 0;   // requests accepted by the scheduler (logged at exit)
  bool idle_outputs_due_ = false;  // an abort changed state that no step has reported yet

  base::BlockingQueue<Input> inputs_;
  base::BlockingQueue<Output> outputs_;
  // Output buffers the output thread has sent, handed back for the scheduler
  // to fill again (no per-step allocation of output slots, ids and token lists).
  base::BlockingQueue<proto::EngineCoreOutputs> recycled_;
  std::vector<ClientOutputs> step_outputs_;  // main thread: the last step's per-client outputs
  std::atomic<bool> stop_io_{false};
  std::atomic<bool> shutdown_requested_{false};
  std::mutex announce_mu_;
  std::condition_variable announce_cv_;
  enum class Announce { kPending, kSent, kGaveUp } announce_ = Announce::kPending;  // guarded by announce_mu_
  // Records how the ReadyResponses went and wakes WaitUntilAnnounced.
  void SetAnnounced(Announce result);
  std::thread input_thread_;
  std::thread output_thread_;
  StepOverhead step_overhead_;  // main-loop cost per step beyond the executor, logged at exit
};

}  // namespace llmserve::engine_core
