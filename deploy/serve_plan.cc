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
  // Elastic scaling with --data-parallel-address: headless nodes may join later, so listen on TCP.
  plan->remote_engines = f.headless || local < f.data_parallel_size ||
                         (f.elastic && !f.data_parallel_address.empty());
  if (f.data_parallel_rpc_port < 1 || f.data_parallel_rpc_port > 65535)
    return Status::InvalidArgument("--data-parallel-rpc-port must be in 1..65535");
  // Sockets engines dial: TCP on the head's address when some engine runs on
  // another node (ports from --data-parallel-rpc-port up: +0 handshake, +1/+2
  // coordinator, +3+2i/+4+2i frontend i's input/output), else IPC in run_dir.
  const int32_t ports_needed = 4 + 2 * plan->api_server_count;
  if (plan->remote_engines && f.data_parallel_rpc_port + ports_needed > 65536)
    return Status::InvalidArgument("--data-parallel-rpc-port must leave room for the " + std::to_string(ports_needed) +
                                   " consecutive ports the head node uses");
  const std::string host = f.data_parallel_address.empty() ? "127.0.0.1" : f.data_parallel_address;
  auto endpoint = [&](const std::string& ipc_name, int32_t port_offset) {
    if (!plan->remote_engines) return Endpoint{"ipc://" + run_dir + "/" + ipc_name, "ipc://" + run_dir + "/" + ipc_name};
    const std::string port = std::to_string(f.data_parallel_rpc_port + port_offset);
    return Endpoint{"tcp://*:" + port, "tcp://" + host + ":" + port};
  };
  const Endpoint handshake = endpoint("handshake", 0);
  plan->handshake_bind = handshake.bind;
  plan->handshake_address = handshake.address;
  for (int32_t i = 0; i < plan->api_server_count; ++i) {
    plan->frontend_inputs.push_back(endpoint("frontend" + std::to_string(i) + "-in", 3 + 2 * i));
    plan->frontend_outputs.push_back(endpoint("frontend" + std::to_string(i) + "-out", 4 + 2 * i));
  }
  if (plan->api_server_count > 1) plan->metrics_dir = run_dir + "/metrics";
  plan->run_coordinator = (f.data_parallel_size > 1 || f.elastic) && !f.headless;
  if (f.elastic && !f.headless) plan->control_address = "ipc://" + run_dir + "/control";
  if (plan->run_coordinator) {
    // Frontends run on this node: the coordinator's frontend side stays local.
    plan->coordinator_frontend_address = "ipc://" + run_dir + "/coordinator-front";
    const Endpoint publish = endpoint("coordinator-back", 1);
    const Endpoint stats = endpoint("coordinator-stats", 2);
    plan->coordinator_engine_publish_bind = publish.bind;
    plan->coordinator_engine_publish_address = publish.address;
    plan->coordinator_engine_stats_bind = stats.bind;
    plan->coordinator_engine_stats_address = stats.address;
  }
  return Status::Ok();
}

}  // namespace llmserve::deploy
