#pragma once
// ScaleControlClient: a frontend's line to the launcher's control ROUTER for
// elastic data-parallel scaling (proto/admin.proto). Scale() sends one
// ScaleRequest on a DEALER from its own thread and calls back with the
// launcher's ScaleResponse; one scale at a time per frontend (the launcher
// also refuses a second one from another frontend).

#include <zmq.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "proto/admin.pb.h"

namespace llmserve::frontend {

class ScaleControlClient {
 public:
  // Talks to the launcher at `control_address` (ipc:// or tcp://).
  ScaleControlClient(zmq::context_t& context, std::string control_address);
  // Waits for a scale in flight to answer (or give up, see Scale).
  ~ScaleControlClient();
  ScaleControlClient(const ScaleControlClient&) = delete;
  ScaleControlClient& operator=(const ScaleControlClient&) = delete;

  using Callback = std::function<void(const proto::ScaleResponse&)>;
  // Starts `request`; `done` runs on a background thread with the launcher's
  // answer (or a 500 when it did not answer within the drain timeout plus
  // `answer_margin`). Returns false, without calling `done`, when this
  // frontend already has a scale in flight.
  bool Scale(const proto::ScaleRequest& request, Callback done);

  // Whether this frontend has a scale in flight.
  bool busy() const { return busy_; }

  // Upper bound beyond the drain timeout on waiting for the launcher.
  void set_answer_margin(std::chrono::seconds margin) { answer_margin_ = margin; }

 private:
  proto::ScaleResponse Exchange(const proto::ScaleRequest& request);

  zmq::context_t& context_;
  std::string address_;
  std::chrono::seconds answer_margin_{3600};
  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};  // the destructor runs: stop waiting, call nothing back
  std::mutex mu_;
  std::thread worker_;  // the scale in flight (joined before the next one starts)
};

}  // namespace llmserve::frontend
