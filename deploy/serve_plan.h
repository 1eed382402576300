#pragma once
// ServePlan: which processes one `llmserve serve` invocation runs on this node,
// derived from vLLM's data-parallel flags and checked the way vLLM checks them.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace llmserve::deploy {

struct ServeFlags {
  int32_t data_parallel_size = 1;
  int32_t data_parallel_size_local = -1;  // -1: all ranks local (or none when headless needs it)
  int32_t data_parallel_start_rank = -1;  // -1: 0, or required when headless
  std::string data_parallel_address;      // head node address
  int32_t data_parallel_rpc_port = 29550;
  bool headless = false;
  int32_t api_server_count = -1;          // -1: 1 (0 when headless)
  bool elastic = false;                   // --admin-api-key: elastic scaling (coordinator even at DP 1)
};

// A socket one process binds and others dial.
struct Endpoint {
  std::string bind;     // what the owner binds (tcp://*:port or ipc://path)
  std::string address;  // what peers connect to
};

struct ServePlan {
  int32_t data_parallel_size = 1;
  std::vector<uint32_t> local_ranks;   // engines this node runs
  bool headless = false;               // no frontend, no handshake server here
  int32_t api_server_count = 1;        // frontends this node runs
  bool remote_engines = false;         // some ranks run on other nodes: TCP handshake
  std::string handshake_address;       // engines dial this (ipc:// or tcp://host:port)
  std::string handshake_bind;          // the head binds this
  std::vector<Endpoint> frontend_inputs;   // per frontend: its ROUTER for requests to engines
  std::vector<Endpoint> frontend_outputs;  // per frontend: its PULL for engine outputs
  // The DP coordinator (DP > 1 or elastic scaling, on the node with the API servers, as in vLLM).
  // Frontends are on this node, so they subscribe over IPC; engines use IPC
  // when all are local, else TCP on --data-parallel-rpc-port + 1 and + 2.
  bool run_coordinator = false;
  std::string coordinator_frontend_address;      // XPUB to frontends (bind = connect address)
  std::string coordinator_engine_publish_bind;   // XPUB to engines
  std::string coordinator_engine_publish_address;
  std::string coordinator_engine_stats_bind;     // PULL from engines
  std::string coordinator_engine_stats_address;
  // Elastic scaling: the launcher's control ROUTER frontends send scale requests to (IPC).
  std::string control_address;  // "" without elastic scaling
  // With several API servers: the folder where they share metric snapshots, so that each one's
  // /metrics shows them all ("" with one, which shows its own).
  std::string metrics_dir;
};

// Validates the flag combination and lays out the node's processes. `run_dir`
// holds the IPC socket paths when every engine is local, and the API servers'
// metric snapshots.
Status MakeServePlan(const ServeFlags& flags, const std::string& run_dir, ServePlan* plan);

}  // namespace llmserve::deploy
