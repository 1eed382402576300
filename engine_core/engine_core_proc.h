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
// SIGTERM drains: new requests are refused with an abort output, in-flight
// ones run to completion up to the shutdown timeout.

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "common/blocking_queue.h"
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
  }

 private:
  // One decoded message from a frontend (monostate: a wake-up).
  struct Utility {
    proto::UtilityRequest request;
  };
  struct Abort {
    std::vector<std::string> ids;
  };
  using Input = std::variant<std::monostate, proto::EngineCoreRequest, Abort, Utility>;
  // One message for the output thread: outputs for a client, or the death signal.
  struct Output {
    int32_t client_index = 0;
    proto::EngineCoreOutputs outputs;
    bool dead = false;
  };

  void InputLoop();
  void OutputLoop();
  void HandleInput(Input input);
  void HandleUtility(const proto::UtilityRequest& request);
  void SendAbortOutput(const proto::EngineCoreRequest& request, const std::string& why);

  zmq::context_t& context_;
  EngineProcOptions options_;
  proto::EngineAddresses addresses_;
  std::unique_ptr<EngineCore> core_;
  uint32_t max_model_len_;

  common::BlockingQueue<Input> inputs_;
  common::BlockingQueue<Output> outputs_;
  std::atomic<bool> stop_io_{false};
  std::atomic<bool> shutdown_requested_{false};
  std::thread input_thread_;
  std::thread output_thread_;
  StepOverhead step_overhead_;  // main-loop cost per step beyond the executor, logged at exit
};

}  // namespace llmserve::engine_core
