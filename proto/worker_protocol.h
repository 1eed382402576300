#pragma once
// The messages between an engine's MultiProcExecutor and its worker processes.
// Engine -> workers (broadcast ring): one type byte, then the payload.
// Worker -> engine (each worker's response ring): one status byte, then the
// payload (or the error text).

#include <cstdint>

namespace llmserve::proto {

enum class WorkerCommand : uint8_t {
  kProfileKvCache = 1,  // payload: none; every rank replies the blocks that fit (decimal text)
  kInitKvCache = 2,     // payload: number of blocks (decimal text); every rank replies
  kExecute = 3,         // payload: msgpack SchedulerOutput; the output rank replies ModelRunnerOutput
  kShutdown = 4,        // payload: none; workers exit
};

enum class WorkerReply : uint8_t { kOk = 0, kError = 1 };

// The rank that answers kExecute (the first tensor-parallel rank).
inline constexpr uint32_t kOutputRank = 0;

}  // namespace llmserve::proto
