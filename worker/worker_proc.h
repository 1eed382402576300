#pragma once
// WorkerProc: the body of one llmserve-worker process (one tensor-parallel
// rank). It attaches to its engine's broadcast ring, publishes its own
// response ring, joins the shared-memory all-reduce group, loads its shard of
// the model and then serves the engine's commands until kShutdown or until
// the engine goes away.

#include <string>

#include "base/status.h"

namespace llmserve::worker {

struct WorkerProcOptions {
  std::string config_file;          // EngineConfig (protobuf) written by the engine
  std::string broadcast_handle_file;  // the engine's ring handle
  std::string response_handle_file;   // where this worker writes its ring handle
  std::string tp_group;             // shared-memory all-reduce group name (tp > 1)
  uint32_t rank = 0;
  uint32_t world_size = 1;
};

// Runs the worker; returns when the engine shuts it down (ok) or on failure.
Status RunWorker(const WorkerProcOptions& options);

}  // namespace llmserve::worker
