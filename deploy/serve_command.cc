#include "deploy/serve_command.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <thread>

#include "common/process/termination_signals.h"
#include "common/flags.h"
#include "common/ipc/cluster_key.h"
#include "common/process/child_processes.h"
#include "deploy/coordinator_link.h"
#include "deploy/elastic_scaler.h"
#include "deploy/engine_flags.h"
#include "deploy/serve_plan.h"
#include "deploy/handshake_server.h"
#include "worker/test_model.h"

DEFINE_string(host, "0.0.0.0", "Address the HTTP server listens on.");
DEFINE_int32(port, 8000, "Port the HTTP server listens on (shared by all API servers).");
DEFINE_string(api_key, "", "If set, /v1/* requests must send 'Authorization: Bearer KEY'.");
DEFINE_int64(max_request_body_bytes, 8 << 20, "Largest HTTP request body accepted (HTTP 413 beyond).");
DEFINE_int32(data_parallel_size, 1, "Number of data-parallel engine ranks in the whole deployment.");
DEFINE_int32(data_parallel_size_local, -1, "Engine ranks on this node (default: all of them, or the rest from --data-parallel-start-rank).");
DEFINE_int32(data_parallel_start_rank, -1, "First engine rank on this node (headless nodes).");
DEFINE_string(data_parallel_address, "", "Head node address engines dial for the handshake.");
DEFINE_int32(data_parallel_rpc_port, 29550, "Head node handshake port (TCP, when engines run on other nodes).");
DEFINE_bool(headless, false, "Run only engines and workers on this node; they dial the head node.");
DEFINE_int32(api_server_count, -1, "Frontend (API server) processes on this node (default 1).");
DEFINE_double(engine_ready_timeout, 600, "Seconds to wait for every engine to load its model and report ready.");
DEFINE_string(dp_routing, "score",
              "How requests without an X-data-parallel-rank header pick a DP rank: score (token-aware load: waiting "
              "prompt tokens + 256 per waiting or running request) or prefix (requests sharing their first "
              "--dp-prefix-blocks KV blocks go to one rank unless it is overloaded).");
DEFINE_int32(dp_prefix_blocks, 4, "With --dp-routing prefix: leading KV blocks of the prompt that choose the rank (a device-default block size counts as 16 tokens).");
DEFINE_int64(dp_prefix_overload_tokens, 2048,
             "With --dp-routing prefix: load score margin (tokens) over the least-loaded rank beyond which "
             "affinity yields to the score.");
DEFINE_string(cluster_key_dir, "", "Directory with the cluster key (`llmserve keygen`): CURVE on every TCP socket between nodes; give every node the same key.");
DEFINE_string(admin_api_key, "",
              "Enables elastic data-parallel scaling: POST /scale_elastic_ep {\"new_data_parallel_size\": N} with "
              "'Authorization: Bearer KEY' starts or stops engine ranks while the rest keep serving. Empty: disabled.");
DEFINE_string(restart_policy, "never",
              "When an engine or frontend dies: never (stop the deployment, exit 1) or on-failure (restart it).");

namespace llmserve::deploy {

namespace {

std::atomic<bool>* g_stop = nullptr;

std::string JoinRanks(const std::vector<uint32_t>& ranks) {
  std::string s;
  for (uint32_t r : ranks) {
    if (!s.empty()) s += ',';
    s += std::to_string(r);
  }
  return s;
}

std::vector<std::string> EngineArgv(const std::string& bin, const ServePlan& plan, uint32_t rank) {
  return {bin + "/llmserve-engine",
          "--handshake-address=" + plan.handshake_address,
          "--data-parallel-rank=" + std::to_string(rank),
          plan.headless ? "--headless" : "--noheadless",
          plan.headless ? "--nolocal" : "--local",
          "--engine-ready-timeout=" + std::to_string(static_cast<int>(FLAGS_engine_ready_timeout)),
          "--cluster-key-dir=" + FLAGS_cluster_key_dir};
}

// `dp_size`: the ranks in effect now (a frontend restarted after an elastic
// scale starts from the current size; the coordinator's membership then rules).
std::vector<std::string> FrontendArgv(const std::string& bin, const proto::EngineConfig& config, int index,
                                      int count, const ServePlan& plan, int dp_size) {
  std::vector<uint32_t> ranks;
  for (int r = 0; r < dp_size; ++r) ranks.push_back(static_cast<uint32_t>(r));
  std::vector<std::string> argv = {
      bin + "/llmserve-frontend",
      "--model=" + config.model().model_dir(),
      "--served-model-name=" + config.model().served_model_name(),
      "--host=" + FLAGS_host,
      "--port=" + std::to_string(FLAGS_port),
      "--client-index=" + std::to_string(index),
      "--api-server-count=" + std::to_string(count),
      "--input-address=" + plan.frontend_inputs[static_cast<size_t>(index)].bind,
      "--output-address=" + plan.frontend_outputs[static_cast<size_t>(index)].bind,
      "--engine-ranks=" + JoinRanks(ranks),
      "--max-request-body-bytes=" + std::to_string(FLAGS_max_request_body_bytes)};
  if (!FLAGS_api_key.empty()) argv.push_back("--api-key=" + FLAGS_api_key);
  argv.push_back("--cluster-key-dir=" + FLAGS_cluster_key_dir);
  if (plan.run_coordinator) argv.push_back("--coordinator-address=" + plan.coordinator_frontend_address);
  if (!plan.control_address.empty()) {
    argv.push_back("--control-address=" + plan.control_address);
    argv.push_back("--admin-api-key=" + FLAGS_admin_api_key);
  }
  const uint32_t block_size = config.cache().block_size() > 0 ? config.cache().block_size() : 16;
  argv.push_back("--dp-routing=" + FLAGS_dp_routing);
  argv.push_back("--dp-prefix-affinity-tokens=" + std::to_string(FLAGS_dp_prefix_blocks * static_cast<int64_t>(block_size)));
  argv.push_back("--dp-prefix-overload-tokens=" + std::to_string(FLAGS_dp_prefix_overload_tokens));
  return argv;
}

std::vector<std::string> CoordinatorArgv(const std::string& bin, const ServePlan& plan) {
  return {bin + "/llmserve-coordinator",
          "--data-parallel-size=" + std::to_string(plan.data_parallel_size),
          "--frontend-publish-address=" + plan.coordinator_frontend_address,
          "--engine-publish-address=" + plan.coordinator_engine_publish_bind,
          "--engine-stats-address=" + plan.coordinator_engine_stats_bind,
          "--cluster-key-dir=" + FLAGS_cluster_key_dir};
}

// Turns SIGTERM/SIGINT into a flag (children unblock them).
void InstallSignalWatcher(std::atomic<bool>* stop) {
  g_stop = stop;
  common::WatchTerminationSignals([](int sig) {
    LOG(INFO) << "received " << strsignal(sig) << "; draining";
    g_stop->store(true);
  });
}

// The built-in demo model (a tiny Qwen3 with random weights and the real
// tokenizer), generated on first use under $XDG_CACHE_HOME or ~/.cache.
StatusOr<std::string> EnsureDemoModel() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string root = cache ? cache : std::string(home ? home : "/tmp") + "/.cache";
  const std::string dir = root + "/llmserve/demo-qwen3-tiny";
  if (std::filesystem::exists(dir + "/config.json")) return dir;
  LOG(INFO) << "no MODEL_DIR given: generating the demo model (tiny Qwen3, random weights) in " << dir;
  auto spec = worker::TestModelPreset("tiny", "qwen3");
  if (!spec.ok()) return spec.status();
  LLMSERVE_RETURN_IF_ERROR(worker::WriteTestModel(*spec, dir).WithContext("generating the demo model"));
  return dir;
}

// The launcher's control ROUTER: frontends' scale requests (elastic scaling).
class ControlSocket {
 public:
  explicit ControlSocket(zmq::context_t& context) : socket_(context, zmq::socket_type::router) {}

  Status Bind(const std::string& address) {
    try {
      socket_.set(zmq::sockopt::linger, 0);
      socket_.bind(address);
    } catch (const zmq::error_t& e) {
      return Status::Unavailable("cannot bind the control socket " + address + ": " + e.what());
    }
    return Status::Ok();
  }

  // A scale request that arrived within `timeout` (with the sender's identity in `from`).
  std::optional<proto::ScaleRequest> Receive(std::chrono::milliseconds timeout, std::string* from) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    try {
      if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
      zmq::message_t identity, body;
      if (!socket_.recv(identity, zmq::recv_flags::dontwait) || !identity.more()) return std::nullopt;
      (void)socket_.recv(body);
      while (body.more()) (void)socket_.recv(body);
      *from = identity.to_string();
      proto::ScaleRequest request;
      if (!request.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
        Reply(*from, MakeScaleResponse(400, "malformed scale request", 0));
        return std::nullopt;
      }
      return request;
    } catch (const zmq::error_t& e) {
      LOG(ERROR) << "launcher: control socket error: " << e.what();
      return std::nullopt;
    }
  }

  // Answers the frontend `to`.
  void Reply(const std::string& to, const proto::ScaleResponse& response) {
    const std::string bytes = response.SerializeAsString();
    try {
      socket_.send(zmq::buffer(to), zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      LOG(ERROR) << "launcher: cannot answer a scale request: " << e.what();
    }
  }

 private:
  zmq::socket_t socket_;
};

}  // namespace

int RunServeCommand(int argc, char** argv) {
  common::InitProcess(&argc, &argv,
      "llmserve serve [MODEL_DIR] [--flags]\n"
      "Serves MODEL_DIR (a Hugging Face model directory) over an OpenAI-compatible HTTP API:\n"
      "starts the frontend(s), one engine core per data-parallel rank and their workers, and\n"
      "supervises them. SIGTERM/SIGINT drain in-flight requests, then stop everything.");
  if (argc > 2) {
    LOG(ERROR) << "llmserve serve takes one MODEL_DIR; got " << argc - 1 << " arguments";
    return 2;
  }
  std::string model_dir = argc == 2 ? argv[1] : "";
  if (model_dir.empty()) {
    auto demo = EnsureDemoModel();
    if (!demo.ok()) {
      LOG(ERROR) << demo.status().message();
      return 1;
    }
    model_dir = *demo;
  }
  if (!std::filesystem::is_directory(model_dir)) {
    LOG(ERROR) << "model directory '" << model_dir << "' does not exist";
    return 2;
  }
  model_dir = std::filesystem::absolute(model_dir).string();
  if (FLAGS_dp_routing != "score" && FLAGS_dp_routing != "prefix") {
    LOG(ERROR) << "--dp-routing must be score or prefix, got '" << FLAGS_dp_routing << "'";
    return 2;
  }
  if (FLAGS_dp_prefix_blocks < 1 || FLAGS_dp_prefix_overload_tokens < 0) {
    LOG(ERROR) << "--dp-prefix-blocks must be at least 1 and --dp-prefix-overload-tokens not negative";
    return 2;
  }
  if (FLAGS_restart_policy != "never" && FLAGS_restart_policy != "on-failure") {
    LOG(ERROR) << "--restart-policy must be never or on-failure, got '" << FLAGS_restart_policy << "'";
    return 2;
  }
  proto::EngineConfig config;
  if (Status s = EngineConfigFromFlags(model_dir, &config); !s.ok()) {
    LOG(ERROR) << s.message();
    return 2;
  }
  const std::string run_dir = common::ipc::RuntimeDir() + "/llmserve-" + std::to_string(getpid());
  std::filesystem::create_directories(run_dir);
  ServeFlags flags{FLAGS_data_parallel_size, FLAGS_data_parallel_size_local, FLAGS_data_parallel_start_rank,
                   FLAGS_data_parallel_address, FLAGS_data_parallel_rpc_port, FLAGS_headless, FLAGS_api_server_count,
                   !FLAGS_admin_api_key.empty()};
  ServePlan plan;
  if (Status s = MakeServePlan(flags, run_dir, &plan); !s.ok()) {
    LOG(ERROR) << s.message();
    return 2;
  }
  config.mutable_parallel()->set_data_parallel_size(static_cast<uint32_t>(plan.data_parallel_size));
  // Engines on the head share its cores (headless nodes' engines get the same value from the handshake).
  config.mutable_parallel()->set_data_parallel_size_local(static_cast<uint32_t>(std::max<size_t>(plan.local_ranks.size(), 1)));

  std::atomic<bool> stop{false};
  InstallSignalWatcher(&stop);
  const std::string bin = common::ExecutableDirectory();
  common::ChildProcesses children;
  zmq::context_t zmq_context;
  auto authenticator = llmserve::common::ipc::SecureProcess(FLAGS_cluster_key_dir, zmq_context);
  if (!authenticator.ok()) {
    LOG(ERROR) << authenticator.status().message();
    return 2;
  }

  // The head node runs the handshake: it tells engines where the frontends are.
  std::unique_ptr<HandshakeServer> handshake;
  if (!plan.headless) {
    proto::HandshakeReply reply;
    *reply.mutable_config() = config;
    for (int i = 0; i < plan.api_server_count; ++i) {
      reply.mutable_addresses()->add_inputs(plan.frontend_inputs[static_cast<size_t>(i)].address);
      reply.mutable_addresses()->add_outputs(plan.frontend_outputs[static_cast<size_t>(i)].address);
    }
    if (plan.run_coordinator) {
      reply.mutable_addresses()->set_coordinator_input(plan.coordinator_engine_publish_address);
      reply.mutable_addresses()->set_coordinator_output(plan.coordinator_engine_stats_address);
      reply.mutable_addresses()->set_frontend_stats_publish_address(plan.coordinator_frontend_address);
      auto pid = children.Spawn("coordinator", CoordinatorArgv(bin, plan));
      if (!pid.ok()) {
        LOG(ERROR) << pid.status().message();
        return 1;
      }
    }
    handshake = std::make_unique<HandshakeServer>(zmq_context, reply);
    if (Status s = handshake->Bind(plan.handshake_bind); !s.ok()) {
      LOG(ERROR) << s.message();
      return 1;
    }
    for (int r = 0; r < plan.data_parallel_size; ++r) {
      bool local = std::find(plan.local_ranks.begin(), plan.local_ranks.end(), static_cast<uint32_t>(r)) !=
                   plan.local_ranks.end();
      handshake->Expect(static_cast<uint32_t>(r), local);
    }
    for (int i = 0; i < plan.api_server_count; ++i) {
      auto pid = children.Spawn("frontend" + std::to_string(i),
                                FrontendArgv(bin, config, i, plan.api_server_count, plan, plan.data_parallel_size));
      if (!pid.ok()) {
        LOG(ERROR) << pid.status().message();
        return 1;
      }
    }
  }
  for (uint32_t rank : plan.local_ranks) {
    auto pid = children.Spawn("engine" + std::to_string(rank), EngineArgv(bin, plan, rank));
    if (!pid.ok()) {
      LOG(ERROR) << pid.status().message();
      return 1;
    }
  }

  // Startup: wait for every engine, failing fast if a process exits.
  int exit_code = 0;
  if (handshake) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(FLAGS_engine_ready_timeout * 1000));
    auto next_progress = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (handshake->ReadyRanks().size() < static_cast<size_t>(plan.data_parallel_size)) {
      if (stop) break;
      if (auto exit = children.WaitAny(std::chrono::milliseconds(0))) {
        LOG(ERROR) << exit->name << " " << exit->Describe() << " during startup; stopping";
        exit_code = 1;
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        LOG(ERROR) << "engines not ready after " << FLAGS_engine_ready_timeout << " s: " << handshake->MissingDescription();
        exit_code = 1;
        break;
      }
      if (std::chrono::steady_clock::now() >= next_progress) {
        LOG(INFO) << "waiting for engines: " << handshake->MissingDescription();
        next_progress += std::chrono::seconds(10);
      }
      handshake->PollOnce(std::chrono::milliseconds(100));
    }
    if (exit_code == 0 && !stop)
      LOG(INFO) << "all " << plan.data_parallel_size << " engine(s) ready; serving on http://" << FLAGS_host << ":"
                << FLAGS_port;
  }

  // Elastic scaling: the launcher owns the membership (see deploy/elastic_scaler.h).
  const auto grace = std::chrono::milliseconds(static_cast<int64_t>(config.shutdown_timeout_s() * 1000) + 5000);
  std::unique_ptr<CoordinatorLink> coordinator_link;
  if (plan.run_coordinator && exit_code == 0) {
    coordinator_link = std::make_unique<CoordinatorLink>(zmq_context);
    if (Status s = coordinator_link->Connect(plan.coordinator_frontend_address); !s.ok()) {
      LOG(ERROR) << s.message();
      exit_code = 1;
    }
  }
  std::unique_ptr<ControlSocket> control;
  std::deque<common::ChildExit> exits;  // reaped, not yet handled
  std::unique_ptr<ElasticScaler> scaler;
  if (!plan.control_address.empty() && exit_code == 0) {
    control = std::make_unique<ControlSocket>(zmq_context);
    if (Status s = control->Bind(plan.control_address); !s.ok()) {
      LOG(ERROR) << s.message();
      exit_code = 1;
    }
    ElasticScalerContext ctx;
    ctx.children = &children;
    ctx.handshake = handshake.get();
    ctx.coordinator = coordinator_link.get();
    ctx.spawn_local_engine = [&](uint32_t rank) {
      return children.Spawn("engine" + std::to_string(rank), EngineArgv(bin, plan, rank)).status();
    };
    ctx.tick = [&](std::chrono::milliseconds timeout) {
      handshake->PollOnce(timeout);  // restarted ranks re-handshake meanwhile
      std::string from;
      while (auto busy = control->Receive(std::chrono::milliseconds(0), &from))
        control->Reply(from, MakeScaleResponse(409, "Another scale is in progress; retry when "
                                                    "/is_scaling_elastic_ep answers false.", 0));
      while (auto e = children.WaitAny(std::chrono::milliseconds(0))) exits.push_back(*e);
    };
    ctx.exits = &exits;
    ctx.should_stop = [&] {
      for (const auto& e : exits)
        if (e.name.rfind("engine", 0) != 0) return true;  // a frontend or the coordinator died
      return stop.load();
    };
    ctx.engine_ready_timeout = std::chrono::milliseconds(static_cast<int64_t>(FLAGS_engine_ready_timeout * 1000));
    ctx.engine_stop_grace = grace;
    scaler = std::make_unique<ElasticScaler>(std::move(ctx), static_cast<uint32_t>(plan.data_parallel_size));
    LOG(INFO) << "elastic scaling enabled: POST /scale_elastic_ep with the admin API key";
  }

  // Supervise until a signal or a death.
  bool finished = false;  // a headless node whose engines all left (scale-down)
  while (exit_code == 0 && !stop && !finished) {
    if (handshake) handshake->PollOnce(std::chrono::milliseconds(control ? 50 : 100));  // restarted ranks re-handshake
    else std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (coordinator_link) coordinator_link->Poll(std::chrono::milliseconds(0));
    if (control) {
      std::string from;
      if (auto request = control->Receive(std::chrono::milliseconds(50), &from)) control->Reply(from, scaler->Scale(*request));
    }
    while (auto e = children.WaitAny(std::chrono::milliseconds(0))) exits.push_back(*e);
    while (!exits.empty() && exit_code == 0) {
      const common::ChildExit exit = exits.front();
      exits.pop_front();
      const bool engine = exit.name.rfind("engine", 0) == 0;
      if (scaler && scaler->ExpectedExit(exit)) {
        LOG(INFO) << exit.name << " (removed by a scale-down) " << exit.Describe();
        continue;
      }
      if (plan.headless && engine && exit.signal == 0 && exit.exit_code == 0) {
        // The head removed this rank (elastic scale-down): a normal departure.
        LOG(INFO) << exit.name << " left the deployment (scaled down)";
        if (children.running() == 0 && !finished) {
          LOG(INFO) << "every engine on this node left; exiting";
          finished = true;
        }
        continue;
      }
      LOG(ERROR) << exit.name << " " << exit.Describe();
      const uint32_t rank = engine ? static_cast<uint32_t>(std::stoul(exit.name.substr(6))) : 0;
      if (engine && coordinator_link) coordinator_link->SendRankDown(rank);  // it must not hold DP waves
      if (FLAGS_restart_policy == "on-failure" && engine) {
        LOG(INFO) << "restarting engine rank " << rank;
        if (handshake) handshake->Expect(rank, true);
        if (children.Spawn(exit.name, EngineArgv(bin, plan, rank)).ok()) continue;
      }
      if (FLAGS_restart_policy == "on-failure" && exit.name.rfind("frontend", 0) == 0) {
        // Engines stay connected; they announce themselves to the new process
        // when it asks, and it aborts what its predecessor left running.
        const int index = std::stoi(exit.name.substr(8));
        const int size = scaler ? static_cast<int>(scaler->size()) : plan.data_parallel_size;
        LOG(INFO) << "restarting " << exit.name;
        if (children.Spawn(exit.name, FrontendArgv(bin, config, index, plan.api_server_count, plan, size)).ok())
          continue;
      }
      // Give frontends a moment to answer 503 to clients before stopping.
      std::this_thread::sleep_for(std::chrono::seconds(2));
      exit_code = 1;
    }
  }
  for (const auto& e : children.TerminateAll(grace)) LOG(INFO) << e.name << " " << e.Describe();
  std::filesystem::remove_all(run_dir);
  return exit_code;
}

}  // namespace llmserve::deploy
