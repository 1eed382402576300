#include "engine_core/request_status.h"

namespace llmserve::engine_core {

std::string_view RequestStatusName(RequestStatus s) {
  switch (s) {
    case RequestStatus::kWaiting: return "WAITING";
    case RequestStatus::kWaitingForStructuredOutputGrammar: return "WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR";
    case RequestStatus::kWaitingForRemoteKVs: return "WAITING_FOR_REMOTE_KVS";
    case RequestStatus::kRunning: return "RUNNING";
    case RequestStatus::kPreempted: return "PREEMPTED";
    case RequestStatus::kFinishedStopped: return "FINISHED_STOPPED";
    case RequestStatus::kFinishedLengthCapped: return "FINISHED_LENGTH_CAPPED";
    case RequestStatus::kFinishedAborted: return "FINISHED_ABORTED";
    case RequestStatus::kFinishedError: return "FINISHED_ERROR";
  }
  return "UNKNOWN";
}

}  // namespace llmserve::engine_core
