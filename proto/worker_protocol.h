#pragma once
// The messages between an engine's MultiProcExecutor and its worker processes.
// Engine -> workers (broadcast ring): one type byte, then the payload.
// Worker -> engine (each worker's response ring): one status byte, then the
// payload (or the error text).

#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/status.h"

namespace llmserve::proto {

enum class WorkerCommand : uint8_t {
  kProfileKvCache = 1,  // payload: none; every rank replies the blocks that fit (decimal text)
  kInitKvCache = 2,     // payload: number of blocks (decimal text); every rank replies
  kExecute = 3,         // payload: msgpack SchedulerOutput; the output rank replies ModelRunnerOutput
  kShutdown = 4,        // payload: none; workers exit
  kAddLora = 5,         // payload: name '\0' directory; every rank replies its status (EncodeStatusReply)
  kRemoveLora = 6,      // payload: name; every rank replies its status (EncodeStatusReply)
};

enum class WorkerReply : uint8_t { kOk = 0, kError = 1 };

// A status as a kOk reply's payload: its code (decimal) '\n' its message.
inline std::string EncodeStatusReply(const Status& status) {
  return std::to_string(static_cast<int>(status.code())) + "\n" + status.message();
}
inline Status DecodeStatusReply(const std::string& payload) {
  const size_t nl = payload.find('\n');
  if (nl == std::string::npos) return Status::Internal("malformed worker status reply");
  const int code = std::atoi(payload.substr(0, nl).c_str());
  if (code == 0) return Status::Ok();
  return Status(static_cast<StatusCode>(code), payload.substr(nl + 1));
}

// The rank that answers kExecute (the first tensor-parallel rank).
inline constexpr uint32_t kOutputRank = 0;

}  // namespace llmserve::proto
