// llmserve-worker: one tensor-parallel rank of an engine. Spawned by the
// engine's multi-process executor, which passes these flags; it dies with its
// engine.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"
#include "worker/worker_proc.h"

DEFINE_string(config_file, "", "Engine configuration (protobuf EngineConfig) written by the engine.");
DEFINE_string(broadcast_handle_file, "", "File holding the engine's broadcast ring handle.");
DEFINE_string(response_handle_file, "", "File this worker writes its response ring handle to.");
DEFINE_string(tp_group, "", "Shared-memory all-reduce group name shared by the ranks.");
DEFINE_int32(rank, 0, "This worker's tensor-parallel rank, 0 .. world_size-1.");
DEFINE_int32(world_size, 1, "Number of tensor-parallel workers of the engine.");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-worker: runs one tensor-parallel shard of the model for an engine core.\n"
      "Started by llmserve-engine (--tensor-parallel-size > 1); not meant to be run by hand.\n"
      "usage: llmserve-worker --config-file F --broadcast-handle-file F --response-handle-file F --rank R "
      "--world-size N");
  if (FLAGS_config_file.empty() || FLAGS_broadcast_handle_file.empty() || FLAGS_response_handle_file.empty()) {
    LOG(ERROR) << "--config-file, --broadcast-handle-file and --response-handle-file are required "
                  "(the engine passes them when it spawns workers)";
    return 2;
  }
  if (FLAGS_world_size < 1 || FLAGS_rank < 0 || FLAGS_rank >= FLAGS_world_size) {
    LOG(ERROR) << "--rank must be in 0..--world-size-1";
    return 2;
  }
  llmserve::worker::WorkerProcOptions options{FLAGS_config_file, FLAGS_broadcast_handle_file,
                                              FLAGS_response_handle_file, FLAGS_tp_group,
                                              static_cast<uint32_t>(FLAGS_rank), static_cast<uint32_t>(FLAGS_world_size)};
  llmserve::Status s = llmserve::worker::RunWorker(options);
  if (!s.ok()) {
    LOG(ERROR) << "worker " << FLAGS_rank << ": " << s.ToString();
    return 1;
  }
  return 0;
}
