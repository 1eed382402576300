#pragma once
// EngineProcess: one llmserve-engine process's life once its flags are
// parsed: the startup handshake with the head node (which sends the
// deployment's configuration and the frontends' addresses), building the
// engine core, announcing it to the frontends, READY to the head node, then
// serving steps until a drain or a failure. A shutdown may be requested at
// any point, from any thread (the signal thread); it takes effect once the
// engine serves, as a drain.

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "engine_core/engine_core_proc.h"
#include "base/status.h"

namespace llmserve::engine_core {

struct EngineProcessOptions {
  std::string handshake_address;                      // the head node's handshake socket
  uint32_t rank = 0;                                  // global data-parallel rank
  bool local = true;                                  // runs on the head node
  bool headless = false;                              // started on a headless node
  std::chrono::milliseconds ready_timeout{600000};    // wait for the handshake reply
};

class EngineProcess {
 public:
  explicit EngineProcess(EngineProcessOptions options) : options_(std::move(options)) {}
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;

  // Runs the engine to the end; OK after a clean drain, else the failure
  // (already logged, with the rank). Sockets use `context`.
  Status Run(zmq::context_t& context);

  // Asks the engine to drain and stop (safe from any thread, before or during Run).
  void RequestShutdown();

 private:
  EngineProcessOptions options_;
  std::mutex mu_;                   // guards the two below
  bool shutdown_requested_ = false;
  EngineCoreProc* proc_ = nullptr;  // set while the engine serves
};

}  // namespace llmserve::engine_core
