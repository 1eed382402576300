// llmserve-coordinator: collects engine load stats and DP waves, publishes them to frontends.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <atomic>

#include "common/flags.h"
#include "common/ipc/cluster_key.h"
#include "common/process/termination_signals.h"
#include "coordinator/coordinator.h"

DEFINE_int32(data_parallel_size, 1, "Number of data-parallel engines the coordinator tracks.");
DEFINE_string(frontend_publish_address, "tcp://127.0.0.1:*", "Address to bind for publishing load stats to frontends.");
DEFINE_string(engine_publish_address, "tcp://127.0.0.1:*", "Address to bind for START_DP_WAVE and READY to engines.");
DEFINE_string(engine_stats_address, "tcp://127.0.0.1:*", "Address to bind for stats pushed by engines.");
DEFINE_int32(publish_interval_ms, 100, "Minimum gap between load snapshots while loads change.");
DEFINE_string(cluster_key_dir, "", "Directory with the cluster key (`llmserve keygen`): CURVE on every TCP socket between nodes.");
DEFINE_int32(heartbeat_interval_ms, 1000, "Gap between snapshots while nothing changes.");

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-coordinator: data-parallel coordinator; publishes per-engine load to frontends\n"
      "and tracks DP waves. Started by the launcher on the head node.\n"
      "usage: llmserve-coordinator --data-parallel-size N --frontend-publish-address ADDR ...");
  using namespace llmserve;
  coordinator::CoordinatorOptions options;
  options.state.num_ranks = static_cast<uint32_t>(std::max(FLAGS_data_parallel_size, 0));
  options.state.publish_interval = std::chrono::milliseconds(FLAGS_publish_interval_ms);
  options.state.heartbeat_interval = std::chrono::milliseconds(FLAGS_heartbeat_interval_ms);
  options.frontend_publish_bind = FLAGS_frontend_publish_address;
  options.engine_publish_bind = FLAGS_engine_publish_address;
  options.engine_stats_bind = FLAGS_engine_stats_address;
  if (Status s = options.Validate(); !s.ok()) {
    LOG(ERROR) << s.message();
    return 2;
  }
  std::atomic<bool> stop{false};
  common::WatchTerminationSignals([&stop](int) { stop = true; });
  zmq::context_t context;
  auto authenticator = common::ipc::SecureProcess(FLAGS_cluster_key_dir, context);
  if (!authenticator.ok()) {
    LOG(ERROR) << authenticator.status().message();
    return 2;
  }
  auto coord = coordinator::Coordinator::Create(context, options);
  if (!coord.ok()) {
    LOG(ERROR) << coord.status().message();
    return 1;
  }
  if (Status s = (*coord)->Run(stop); !s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  return 0;
}
