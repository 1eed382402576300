#include "deploy/serve_plan.h"

namespace llmserve::deploy {

Status MakeServePlan(const ServeFlags& f, const std::string& run_dir, ServePlan* plan) {
  *plan = ServePlan();
  if (f.data_parallel_size < 1) return Status::InvalidArgument("--data-parallel-size must be at least 1");
  plan->data_parallel_size = f.data_parallel_size;
  plan->headless = f.headless;
  const int32_t start = f.data_parallel_start_rank < 0 ? 0 : f.data_parallel_start_rank;
  const int32_t local = f.data_parallel_size_local < 0 ? f.data_parallel_size - start : f.data_parallel_size_local;
  if (local < 0) return Status::InvalidArgument("--data-parallel-size-local must not be negative");
  if (start + local > f.data_parallel_size)
    return Status::InvalidArgument("--data-parallel-start-rank (" + std::to_string(start) +
                                   ") + --data-parallel-size-local (" + std::to_string(local) +
                                   ") exceeds --data-parallel-size (" + std::to_string(f.data_parallel_size) + ")");
  if (f.headless) {
    if (f.api_server_count > 0)
      return Status::InvalidArgument("--api-server-count cannot be used with --headless (a headless node runs no API server)");
    if (local == 0) return Status::InvalidArgument("--headless with --data-parallel-size-local 0 runs nothing");
    if (f.data_parallel_start_rank < 0 && f.data_parallel_size > 1)
      return Status::InvalidArgument("--headless needs --data-parallel-start-rank (the first rank on this node)");
    if (f.data_parallel_address.empty() && start > 0)
      return Status::InvalidArgument("--headless needs --data-parallel-address (the head node)");
    plan->api_server_count = 0;
  } else {
    if (start != 0)
      return Status::InvalidArgument(
          "--data-parallel-start-rank is for --headless nodes; the node with the API server runs rank 0 "
          "(hybrid/external load balancing is not supported)");
    plan->api_server_count = f.api_server_count < 0 ? 1 : f.api_server_count;
    if (plan->api_server_count < 1) return Status::InvalidArgument("--api-server-count must be at least 1");
  }
  for (int32_t r = start; r < start + local; ++r) plan->local_ranks.push_back(static_cast<uint32_t>(r));
  plan->remote_engines = f.headless || local < f.data_parallel_size;
  if (f.data_parallel_rpc_port < 1 || f.data_parallel_rpc_port > 65535)
    return Status::InvalidArgument("--data-parallel-rpc-port must be in 1..65535");
  if (plan->remote_engines) {
    const std::string host = f.data_parallel_address.empty() ? "127.0.0.1" : f.data_parallel_address;
    plan->handshake_address = "tcp://" + host + ":" + std::to_string(f.data_parallel_rpc_port);
    plan->handshake_bind = "tcp://*:" + std::to_string(f.data_parallel_rpc_port);
  } else {
    plan->handshake_address = "ipc://" + run_dir + "/handshake";
    plan->handshake_bind = plan->handshake_address;
  }
  plan->run_coordinator = f.data_parallel_size > 1 && !f.headless;
  if (plan->run_coordinator) {
    plan->coordinator_frontend_address = "ipc://" + run_dir + "/coordinator-front";
    if (plan->remote_engines) {
      if (f.data_parallel_rpc_port + 2 > 65535)
        return Status::InvalidArgument("--data-parallel-rpc-port must leave room for the coordinator's two ports above it");
      const std::string host = f.data_parallel_address.empty() ? "127.0.0.1" : f.data_parallel_address;
      const std::string pub_port = std::to_string(f.data_parallel_rpc_port + 1);
      const std::string stats_port = std::to_string(f.data_parallel_rpc_port + 2);
      plan->coordinator_engine_publish_bind = "tcp://*:" + pub_port;
      plan->coordinator_engine_publish_address = "tcp://" + host + ":" + pub_port;
      plan->coordinator_engine_stats_bind = "tcp://*:" + stats_port;
      plan->coordinator_engine_stats_address = "tcp://" + host + ":" + stats_port;
    } else {
      plan->coordinator_engine_publish_bind = "ipc://" + run_dir + "/coordinator-back";
      plan->coordinator_engine_publish_address = plan->coordinator_engine_publish_bind;
      plan->coordinator_engine_stats_bind = "ipc://" + run_dir + "/coordinator-stats";
      plan->coordinator_engine_stats_address = plan->coordinator_engine_stats_bind;
    }
  }
  return Status::Ok();
}

}  // namespace llmserve::deploy
