// llmserve-engine: the engine core of one data-parallel rank. Started by the
// launcher (`llmserve serve`); dials the head node's handshake socket, learns
// the deployment's configuration and the frontends' addresses, loads the
// model, then serves steps until SIGTERM (drain) or a failure.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>

#include <thread>

#include "common/process/termination_signals.h"
#include "common/flags.h"
#include "common/ipc/cluster_key.h"
#include "engine_core/engine_core_proc.h"
#include "engine_core/engine_factory.h"
#include "engine_core/startup_handshake.h"

DEFINE_string(handshake_address, "", "ZMQ address of the head node's handshake socket (ipc:// or tcp://host:port).");
DEFINE_int32(data_parallel_rank, 0, "Global data-parallel rank of this engine.");
DEFINE_bool(local, true, "This engine runs on the head node (as the frontend that launched it).");
DEFINE_bool(headless, false, "This engine was started on a headless node.");
DEFINE_string(cluster_key_dir, "", "Directory with the cluster key (`llmserve keygen`): CURVE on every TCP socket between nodes.");
DEFINE_double(engine_ready_timeout, 600, "Seconds to wait for the handshake reply.");

namespace {
llmserve::engine_core::EngineCoreProc* g_proc = nullptr;
}

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
  // SIGTERM/SIGINT start a drain; handled on a thread, not in a signal handler.
  std::atomic<bool> stop_requested{false};
  common::WatchTerminationSignals([&stop_requested](int) {
    stop_requested = true;
    if (g_proc) g_proc->RequestShutdown();
  });

  const auto rank = static_cast<uint32_t>(FLAGS_data_parallel_rank);
  if (llmserve::Status key = llmserve::common::ipc::InstallClusterKey(FLAGS_cluster_key_dir); !key.ok()) {
    LOG(ERROR) << key.message();
    return 2;
  }
  zmq::context_t context;
  auto handshake = engine_core::StartupHandshake::Connect(
      context, FLAGS_handshake_address, rank, FLAGS_local, FLAGS_headless,
      std::chrono::milliseconds(static_cast<int64_t>(FLAGS_engine_ready_timeout * 1000)));
  if (!handshake.ok()) {
    LOG(ERROR) << "engine " << rank << ": " << handshake.status().message();
    return 1;
  }
  const proto::EngineConfig& config = (*handshake)->reply().config();
  LOG(INFO) << "engine " << rank << ": loading " << config.model().model_dir();
  auto built = engine_core::BuildEngineCore(config, static_cast<int32_t>(rank));
  if (!built.ok()) {
    LOG(ERROR) << "engine " << rank << ": " << built.status().message();
    return 1;
  }
  engine_core::EngineProcOptions options;
  options.rank = rank;
  options.local = FLAGS_local;
  options.headless = FLAGS_headless;
  options.shutdown_timeout = std::chrono::milliseconds(static_cast<int64_t>(config.shutdown_timeout_s() * 1000));
  engine_core::EngineCoreProc proc(context, options, (*handshake)->reply().addresses(), std::move(built->core),
                                   built->max_model_len);
  if (Status s = proc.Start(); !s.ok()) {
    LOG(ERROR) << "engine " << rank << ": " << s.message();
    return 1;
  }
  g_proc = &proc;
  if (stop_requested) proc.RequestShutdown();
  (void)proc.WaitUntilAnnounced();  // READY only after the ReadyResponses went out
  if (Status s = (*handshake)->SendReady(std::hash<std::string>()(config.SerializeAsString())); !s.ok()) {
    LOG(ERROR) << "engine " << rank << ": " << s.message();
    return 1;
  }
  Status result = proc.Run();
  g_proc = nullptr;
  return result.ok() ? 0 : 1;
}
