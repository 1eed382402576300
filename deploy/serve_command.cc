#include "deploy/serve_command.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/flags.h"
#include "common/gguf/model_path.h"
#include "common/ipc/cluster_key.h"
#include "common/process/child_processes.h"
#include "common/process/termination_signals.h"
#include "deploy/demo_model.h"
#include "deploy/engine_flags.h"
#include "deploy/model_argument.h"
#include "deploy/serve_arguments.h"
#include "deploy/supervisor.h"
#include "frontend/chat_template/chat_template.h"
#include "frontend/api_flags.h"
#include "frontend/generation_config.h"
#include "frontend/http/cors.h"
#include "frontend/http/tls_context.h"
#include "frontend/openai/structured_outputs_request.h"
#include "frontend/serving/chat_output.h"

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
DEFINE_string(structured_outputs_config, "",
              "JSON defaults for structured outputs (vLLM's StructuredOutputsConfig keys): "
              "{\"disable_any_whitespace\": true} makes every JSON constraint compact; backend names "
              "(auto, xgrammar, guidance, ...) are accepted and all use the built-in grammar engine.");
DEFINE_bool(enable_auto_tool_choice, false,
            "Let the model call tools on its own (tool_choice \"auto\"); needs --tool-call-parser.");
DEFINE_string(tool_call_parser, "",
              "How tool calls are read from the output: hermes (Qwen2.5/Qwen3), llama3_json, mistral, deepseek_v3.");
DEFINE_string(reasoning_parser, "",
              "Split the output's reasoning into reasoning_content: qwen3 or deepseek_r1 (\"\": no split).");
DEFINE_string(admin_api_key, "",
              "Enables elastic data-parallel scaling: POST /scale_elastic_ep {\"new_data_parallel_size\": N} with "
              "'Authorization: Bearer KEY' starts or stops engine ranks while the rest keep serving. Empty: disabled.");
DEFINE_string(chat_template, "",
              "Chat template replacing the model's: a file, or the template itself when the argument holds '{', "
              "'}' or a newline (escapes such as \\n decoded), as vLLM reads it. \"\": the model's own.");
DEFINE_string(restart_policy, "never",
              "When an engine or frontend dies: never (stop the deployment, exit 1) or on-failure (restart it).");

namespace llmserve::deploy {

namespace {

// --log-stats-interval, or vLLM's VLLM_LOG_STATS_INTERVAL when the flag is not given; -1 when malformed.
double LogStatsInterval() {
  const char* env = std::getenv("VLLM_LOG_STATS_INTERVAL");
  if (env == nullptr || !gflags::GetCommandLineFlagInfoOrDie("log_stats_interval").is_default)
    return FLAGS_log_stats_interval > 0 ? FLAGS_log_stats_interval : -1;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  return end != env && *end == '\0' && v > 0 ? v : -1;
}

}  // namespace

StatusOr<ServeOptions> ServeOptionsFromFlags() {
  if (FLAGS_dp_routing != "score" && FLAGS_dp_routing != "prefix")
    return Status::InvalidArgument("--dp-routing must be score or prefix, got '" + FLAGS_dp_routing + "'");
  if (FLAGS_dp_prefix_blocks < 1 || FLAGS_dp_prefix_overload_tokens < 0)
    return Status::InvalidArgument(
        "--dp-prefix-blocks must be at least 1 and --dp-prefix-overload-tokens not negative");
  auto restart_policy = ParseRestartPolicy(FLAGS_restart_policy);
  if (!restart_policy.ok()) return restart_policy.status();
  ServeOptions o;
  o.bin_dir = common::ExecutableDirectory();
  o.host = FLAGS_host;
  o.port = FLAGS_port;
  o.api_key = FLAGS_api_key;
  o.max_request_body_bytes = FLAGS_max_request_body_bytes;
  o.engine_ready_timeout_s = FLAGS_engine_ready_timeout;
  o.dp_routing = FLAGS_dp_routing;
  o.dp_prefix_blocks = FLAGS_dp_prefix_blocks;
  o.dp_prefix_overload_tokens = FLAGS_dp_prefix_overload_tokens;
  o.cluster_key_dir = FLAGS_cluster_key_dir;
  o.admin_api_key = FLAGS_admin_api_key;
  LLMSERVE_RETURN_IF_ERROR(frontend::openai::ParseStructuredOutputsConfig(FLAGS_structured_outputs_config).status());
  o.structured_outputs_config = FLAGS_structured_outputs_config;
  LLMSERVE_RETURN_IF_ERROR(frontend::serving::ValidateChatOutputFlags(FLAGS_enable_auto_tool_choice,
                                                                      FLAGS_tool_call_parser, FLAGS_reasoning_parser));
  o.enable_auto_tool_choice = FLAGS_enable_auto_tool_choice;
  o.tool_call_parser = FLAGS_tool_call_parser;
  o.reasoning_parser = FLAGS_reasoning_parser;
  o.restart_policy = *restart_policy;
  if (FLAGS_max_logprobs < 0) return Status::InvalidArgument("--max-logprobs must not be negative");
  o.max_logprobs = FLAGS_max_logprobs;
  for (const auto& [flag, value] : {std::pair{"--allowed-origins", &FLAGS_allowed_origins},
                                    std::pair{"--allowed-methods", &FLAGS_allowed_methods},
                                    std::pair{"--allowed-headers", &FLAGS_allowed_headers}})
    LLMSERVE_RETURN_IF_ERROR(frontend::http::ParseCorsList(flag, *value).status());
  o.allowed_origins = FLAGS_allowed_origins;
  o.allowed_methods = FLAGS_allowed_methods;
  o.allowed_headers = FLAGS_allowed_headers;
  o.allow_credentials = FLAGS_allow_credentials;
  frontend::http::TlsOptions tls{FLAGS_ssl_certfile, FLAGS_ssl_keyfile, FLAGS_ssl_ca_certs, FLAGS_ssl_cert_reqs};
  if (tls.enabled() || tls.cert_reqs != 0 || !tls.ca_certs.empty()) {  // bad files fail here, before any engine starts
    if (!tls.enabled()) return Status::InvalidArgument("--ssl-ca-certs / --ssl-cert-reqs need --ssl-certfile");
    LLMSERVE_RETURN_IF_ERROR(frontend::http::MakeTlsContext(tls).status());
  }
  o.ssl_certfile = FLAGS_ssl_certfile;
  o.ssl_keyfile = FLAGS_ssl_keyfile;
  o.ssl_ca_certs = FLAGS_ssl_ca_certs;
  o.ssl_cert_reqs = FLAGS_ssl_cert_reqs;
  if (FLAGS_max_http_connections < 1) return Status::InvalidArgument("--max-http-connections must be at least 1");
  o.max_http_connections = FLAGS_max_http_connections;
  o.http_keep_alive_timeout_s = frontend::HttpKeepAliveTimeoutSeconds();
  if (o.http_keep_alive_timeout_s <= 0)
    return Status::InvalidArgument("--http-keep-alive-timeout (or VLLM_HTTP_TIMEOUT_KEEP_ALIVE) must be positive");
  o.enable_request_id_headers = FLAGS_enable_request_id_headers;
  o.return_tokens_as_token_ids = FLAGS_return_tokens_as_token_ids;
  o.enable_log_requests = FLAGS_enable_log_requests;
  o.enable_log_outputs = FLAGS_enable_log_outputs;
  o.max_log_len = std::max(FLAGS_max_log_len, -1);
  // The model directory does not matter for checking the flags.
  LLMSERVE_RETURN_IF_ERROR(frontend::LoadGenerationDefaults(FLAGS_generation_config, "",
                                                            FLAGS_override_generation_config).status());
  o.generation_config = FLAGS_generation_config;
  o.override_generation_config = FLAGS_override_generation_config;
  if (!FLAGS_chat_template.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(o.chat_template, frontend::ResolveChatTemplateArgument(FLAGS_chat_template));
  }
  o.log_stats_interval_s = FLAGS_disable_log_stats ? 0 : LogStatsInterval();
  if (o.log_stats_interval_s < 0)
    return Status::InvalidArgument("--log-stats-interval (or VLLM_LOG_STATS_INTERVAL) must be a positive number");
  return o;
}

namespace {

// The node's process layout from the data-parallel flags; IPC sockets go in `run_dir`.
Status PlanFromFlags(const std::string& run_dir, ServePlan* plan) {
  ServeFlags flags{FLAGS_data_parallel_size, FLAGS_data_parallel_size_local, FLAGS_data_parallel_start_rank,
                   FLAGS_data_parallel_address, FLAGS_data_parallel_rpc_port, FLAGS_headless, FLAGS_api_server_count,
                   !FLAGS_admin_api_key.empty()};
  return MakeServePlan(flags, run_dir, plan);
}

// Runs the deployment `plan` describes until a signal or a failure.
int Serve(LaunchPlan plan) {
  // SIGTERM/SIGINT become a flag, before any thread starts (children unblock them).
  static std::atomic<bool> stop{false};
  common::WatchTerminationSignals([](int sig) {
    LOG(INFO) << "received " << strsignal(sig) << "; draining";
    stop.store(true);
  });
  zmq::context_t zmq_context;
  auto authenticator = common::ipc::SecureProcess(plan.options().cluster_key_dir, zmq_context);
  if (!authenticator.ok()) {
    LOG(ERROR) << authenticator.status().message();
    return 2;
  }
  Supervisor supervisor(zmq_context, std::move(plan), &stop);
  return supervisor.Run();
}

}  // namespace

int RunServeCommand(int argc, char** argv) {
  auto prepared = PrepareServeArguments(std::vector<std::string>(argv + 1, argv + argc), GflagsIsOurs,
                                        GflagsListStyle);
  if (!prepared.ok()) {
    std::fprintf(stderr, "llmserve serve: %s\n", prepared.status().message().c_str());
    return 2;
  }
  std::vector<std::string> storage{argv[0]};
  storage.insert(storage.end(), prepared->args.begin(), prepared->args.end());
  std::vector<char*> pointers;
  for (auto& s : storage) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  argc = static_cast<int>(storage.size());
  argv = pointers.data();
  common::InitProcess(&argc, &argv,
      "llmserve serve [MODEL] [--config FILE.yaml] [--flags]\n"
      "Serves MODEL over an OpenAI-compatible HTTP API: starts the frontend(s), one engine core\n"
      "per data-parallel rank and their workers, and supervises them. SIGTERM/SIGINT drain\n"
      "in-flight requests, then stop everything.\n"
      "MODEL is a Hugging Face model directory, or a Hugging Face id (Qwen/Qwen3-0.6B) already in\n"
      "the local HF cache ($HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub; see --revision);\n"
      "llmserve does not download. No MODEL: a small generated demo model.\n"
      "  --config FILE.yaml  read flags from a YAML file as vLLM does: keys are flag names, true is a\n"
      "                      bare flag, false is left out, `model:` names MODEL; the command line wins.\n"
      "vLLM's other `vllm serve` flags are accepted with a warning where they change nothing here, or\n"
      "refused where they ask for a missing feature: see docs/vllm-serve-flags.md.");
  for (const auto& warning : prepared->warnings) LOG(WARNING) << warning;
  if (argc > 2) {
    LOG(ERROR) << "llmserve serve takes one MODEL; got " << argc - 1 << " arguments";
    return 2;
  }
  const std::string model_arg = argc == 2 ? argv[1] : prepared->model;
  std::string model_dir, model_name;
  if (model_arg.empty()) {
    auto demo = EnsureDemoModel();
    if (!demo.ok()) {
      LOG(ERROR) << demo.status().message();
      return 1;
    }
    model_dir = *demo;
  } else {
    auto resolved = ResolveModelArgument(model_arg);
    if (!resolved.ok()) {
      LOG(ERROR) << resolved.status().message();
      return 2;
    }
    model_dir = resolved->dir;
    model_name = resolved->hf_id;
  }
  // A directory, or a GGUF file named directly (as `vllm serve ./model.gguf`).
  const StatusOr<std::string> gguf = common::gguf::GgufModelFile(model_dir);
  if (!std::filesystem::is_directory(model_dir) && !(gguf.ok() && !gguf->empty())) {
    LOG(ERROR) << "model '" << model_dir << "' is neither a directory nor a GGUF file"
               << (gguf.ok() ? "" : ": " + gguf.status().message());
    return 2;
  }
  model_dir = std::filesystem::absolute(model_dir).string();
  auto options = ServeOptionsFromFlags();
  proto::EngineConfig config;
  Status s = options.ok() ? EngineConfigFromFlags(model_dir, &config, model_name) : options.status();
  StatusOr<std::string> tokenizer = ResolveTokenizerFlag();
  if (s.ok() && !tokenizer.ok()) s = tokenizer.status();
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    return 2;
  }
  config.mutable_model()->set_tokenizer(*tokenizer);
  const std::string run_dir = common::ipc::RuntimeDir() + "/llmserve-" + std::to_string(getpid());
  std::filesystem::create_directories(run_dir);
  ServePlan plan;
  if (Status p = PlanFromFlags(run_dir, &plan); !p.ok()) {
    LOG(ERROR) << p.message();
    std::filesystem::remove_all(run_dir);
    return 2;
  }
  config.mutable_parallel()->set_data_parallel_size(static_cast<uint32_t>(plan.data_parallel_size));
  // Engines on the head share its cores (headless nodes' engines get the same value from the handshake).
  config.mutable_parallel()->set_data_parallel_size_local(static_cast<uint32_t>(std::max<size_t>(plan.local_ranks.size(), 1)));
  const int exit_code = Serve(LaunchPlan(std::move(options).value(), std::move(plan), std::move(config)));
  std::filesystem::remove_all(run_dir);
  return exit_code;
}

}  // namespace llmserve::deploy
