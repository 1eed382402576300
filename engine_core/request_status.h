#pragma once
// The life cycle of a request inside the engine core (vLLM V1's RequestStatus).
//
//   WAITING ──schedule──▶ RUNNING ──stop/length/abort──▶ FINISHED_*
//      ▲                     │
//      └──── PREEMPTED ◀─────┘  (blocks freed; recomputed when rescheduled)
//
// WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR parks a request until its grammar is
// compiled, WAITING_FOR_REMOTE_KVS until a KV connector's asynchronous load
// into its (allocated) blocks has finished; the scheduler skips such
// requests without blocking the queue.

#include <cstdint>
#include <string_view>

namespace llmserve::engine_core {

enum class RequestStatus : uint8_t {
  kWaiting,
  kWaitingForStructuredOutputGrammar,
  kWaitingForRemoteKVs,
  kRunning,
  kPreempted,
  // Everything from here on is finished.
  kFinishedStopped,       // EOS or a stop token id
  kFinishedLengthCapped,  // max_tokens or max_model_len reached
  kFinishedAborted,       // the client (or a stop string in the frontend) aborted it
  kFinishedError,         // the engine could not serve it
};

// True for the four FINISHED_* states.
inline bool IsFinished(RequestStatus s) { return s >= RequestStatus::kFinishedStopped; }

// Upper-case name as vLLM prints it ("WAITING", "FINISHED_ABORTED", ...).
std::string_view RequestStatusName(RequestStatus s);

}  // namespace llmserve::engine_core
