#pragma once
// EngineClient: what the HTTP handlers need from the engine cores. The real
// implementation talks to the engines over ZeroMQ (ROUTER for requests and
// aborts, PULL for outputs); handlers only see this interface.
//
// Threading: Submit/Abort/IsReady/IsDead/max_model_len may be called from any
// thread. A request's OutputSink is called from the client's output thread,
// one call at a time, in engine order; OnOutput with a finish_reason, or
// OnError, is the last call it gets.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "proto/engine_core_output.h"
#include "proto/engine_core_request.h"
#include "base/status.h"

namespace llmserve::frontend {

// Where one output came from.
struct OutputOrigin {
  uint32_t engine_rank = 0;       // the DP rank of the engine that produced it
  double engine_timestamp = 0.0;  // its EngineCoreOutputs.timestamp: that engine's monotonic
                                  // clock in seconds, comparable only with the same engine's stamps
};

// Receives one request's outputs.
class OutputSink {
 public:
  virtual ~OutputSink() = default;

  // The request's news from one engine step (new token ids, logprobs, finish).
  virtual void OnOutput(const proto::EngineCoreOutput& output) = 0;

  // The request ended without a finished output (engine died, aborted on shutdown).
  virtual void OnError(const Status& status) = 0;

  // OnOutput with where the output came from; clients that know call this one
  // instead of OnOutput. By default it forwards to OnOutput.
  virtual void OnOutputFrom(const proto::EngineCoreOutput& output, const OutputOrigin& /*origin*/) {
    OnOutput(output);
  }

  // The request was sent to engine `engine_rank`. Called inside Submit (with
  // the client's lock held): must be quick and must not call the client.
  virtual void OnRouted(uint32_t /*engine_rank*/) {}
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;

  // Sends `request` to an engine; its outputs go to `sink`. Fails with
  // kResourceExhausted (waiting queue full, HTTP 429), kUnavailable (no engine
  // ready or one is dead, HTTP 503) or kInvalidArgument (duplicate request id).
  virtual Status Submit(proto::EngineCoreRequest request, std::shared_ptr<OutputSink> sink) = 0;

  // Aborts these requests in their engines; their sinks get no further calls after it returns.
  virtual void Abort(const std::vector<std::string>& request_ids) = 0;

  // True once every engine has completed its handshake and is ready for requests.
  virtual bool IsReady() const = 0;

  // True when no engine can serve: every one has died (ENGINE_CORE_DEAD or its
  // process is gone). With data parallelism the others keep serving while one
  // is dead or restarting.
  virtual bool IsDead() const = 0;

  // The context length the engines serve (prompt + output tokens at most).
  virtual int32_t max_model_len() const = 0;
};

}  // namespace llmserve::frontend
