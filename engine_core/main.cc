// llmserve-engine: the engine core of one data-parallel rank. Started by the
// launcher (`llmserve serve`); dials the head node's handshake socket, learns
// the deployment's configuration and the frontends' addresses, loads the
// model, then serves steps until SIGTERM (drain) or a failure
// (see engine_core/engine_process.h).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "common/flags.h"
#include "common/ipc/cluster_key.h"
#include "common/process/termination_signals.h"
#include "engine_core/engine_process.h"

DEFINE_string(handshake_address, "", "ZMQ address of the head node's handshake socket (ipc:// or tcp://host:port).");
DEFINE_int32(data_parallel_rank, 0, "Global data-parallel rank of this engine.");
DEFINE_bool(local, true, "This engine runs on the head node (as the frontend that launched it).");
DEFINE_bool(headless, false, "This engine was started on a headless node.");
DEFINE_string(cluster_key_dir, "", "Directory with the cluster key (`llmserve keygen`): CURVE on every TCP socket between nodes.");
DEFINE_double(engine_ready_timeout, 600, "Seconds to wait for the handshake reply.");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-engine: scheduler and KV cache manager of one data-parallel rank; runs the model\n"
      "(in process, or through its workers) and talks to frontends over ZeroMQ. Started by\n"
      "`llmserve serve`, which passes these flags.\n"
      "usage: llmserve-engine --handshake-address ADDR --data-parallel-rank R [--headless]");
  using namespace llmserve;
  if (FLAGS_handshake_address.empty()) {
    LOG(ERROR) << "--handshake-address is required";
    return 2;
  }
  if (FLAGS_data_parallel_rank < 0 || FLAGS_data_parallel_rank > 65535) {
    LOG(ERROR) << "--data-parallel-rank must be in 0..65535";
    return 2;
  }
  engine_core::EngineProcess engine({FLAGS_handshake_address, static_cast<uint32_t>(FLAGS_data_parallel_rank),
                                     FLAGS_local, FLAGS_headless,
                                     std::chrono::milliseconds(static_cast<int64_t>(FLAGS_engine_ready_timeout * 1000))});
  // SIGTERM/SIGINT start a drain; handled on a thread, not in a signal handler.
  common::WatchTerminationSignals([&engine](int) { engine.RequestShutdown(); });
  if (Status key = common::ipc::InstallClusterKey(FLAGS_cluster_key_dir); !key.ok()) {
    LOG(ERROR) << key.message();
    return 2;
  }
  zmq::context_t context;
  return engine.Run(context).ok() ? 0 : 1;
}
