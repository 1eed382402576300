#include "frontend/frontend_flags.h"

#include "frontend/api_flags.h"
#include "frontend/serving/lora_routes.h"

#include <gflags/gflags.h>

#include <sstream>

DEFINE_string(model, "", "Hugging Face model directory (tokenizer, chat template, generation_config.json).");
DEFINE_string(tokenizer, "", "Directory of the tokenizer and chat template; \"\": the model directory's.");
DEFINE_string(served_model_name, "", "Model name in the API; defaults to the model directory's name.");
DEFINE_string(lora_modules, "",
              "LoRA adapters served, as a JSON list [{\"name\", \"path\", \"base_model_name\"}] (set by "
              "llmserve serve from its --lora-modules).");
DEFINE_bool(enable_lora, false,
            "The engines serve LoRA adapters (set by llmserve serve). With VLLM_ALLOW_RUNTIME_LORA_UPDATING=true "
            "in the environment, /v1/load_lora_adapter and /v1/unload_lora_adapter change them at run time.");
DEFINE_int32(max_loras, 1, "The engines' --max-loras (set by llmserve serve; shown by vllm:lora_requests_info).");
DEFINE_string(runner, "generate",
              "generate, or pooling: the engines embed (set by llmserve serve from its --runner / --convert / "
              "--task); /v1/embeddings and /pooling answer and the generation endpoints do not.");
DEFINE_bool(pooler_normalize, true, "With --runner pooling: L2-normalize embeddings unless a request says otherwise.");
DEFINE_string(host, "0.0.0.0", "Address the HTTP server listens on.");
DEFINE_int32(port, 8000, "Port the HTTP server listens on.");
DEFINE_string(api_key, "", "If set, /v1/* requests must send 'Authorization: Bearer KEY'.");
DEFINE_int32(client_index, 0, "Index of this frontend among the API servers (--api-server-count).");
DEFINE_int32(api_server_count, 1, "Number of API servers sharing the engines.");
DEFINE_string(metrics_dir, "",
              "Folder where the API servers of one deployment share their metric snapshots, so that each one's "
              "/metrics shows them all (set by llmserve serve with --api-server-count > 1); \"\": only this one's.");
DEFINE_string(input_address, "tcp://127.0.0.1:*", "Address to bind for requests to engines (ROUTER).");
DEFINE_string(output_address, "tcp://127.0.0.1:*", "Address to bind for outputs from engines (PULL).");
DEFINE_string(engine_ranks, "0", "Comma-separated data-parallel ranks this frontend routes to.");
DEFINE_string(coordinator_address, "", "DP coordinator address publishing engine loads (empty: no coordinator).");
DEFINE_string(dp_routing, "score", "How requests without a pinned rank pick a DP rank: score (token-aware load) or prefix.");
DEFINE_int32(dp_prefix_affinity_tokens, 64, "With --dp-routing prefix: leading prompt tokens that choose the preferred rank.");
DEFINE_int64(dp_prefix_overload_tokens, 2048,
             "With --dp-routing prefix: load score margin (tokens) over the least-loaded rank beyond which affinity yields.");
DEFINE_string(cluster_key_dir, "", "Directory with the cluster key (`llmserve keygen`): CURVE on every TCP socket between nodes.");
DEFINE_int64(max_request_body_bytes, 8 << 20, "Largest HTTP request body accepted (HTTP 413 beyond).");
DEFINE_string(structured_outputs_config, "",
              "JSON defaults for structured outputs (vLLM's StructuredOutputsConfig): "
              "{\"disable_any_whitespace\": true} makes every JSON constraint compact; backend names are accepted.");
DEFINE_bool(enable_auto_tool_choice, false,
            "Let the model call tools on its own (tool_choice \"auto\"); needs --tool-call-parser.");
DEFINE_string(tool_call_parser, "",
              "How tool calls are read from the output: hermes (Qwen2.5/Qwen3), llama3_json, mistral, deepseek_v3.");
DEFINE_string(reasoning_parser, "",
              "Split the output's reasoning into reasoning_content: qwen3 or deepseek_r1 (\"\": no split).");
DEFINE_string(admin_api_key, "",
              "Key for the admin endpoints (POST /scale_elastic_ep), sent as 'Authorization: Bearer KEY'; "
              "empty: elastic scaling is disabled (403).");
DEFINE_string(chat_template_source, "",
              "Template source replacing the model's chat template (`llmserve serve --chat-template` reads the "
              "file and passes its text); \"\": the model's own.");
DEFINE_string(control_address, "", "The launcher's control socket for elastic scaling (set by `llmserve serve`).");

namespace llmserve::frontend {

namespace {

StatusOr<std::vector<uint32_t>> ParseRanks(const std::string& text) {
  std::vector<uint32_t> ranks;
  std::stringstream in(text);
  try {
    for (std::string part; std::getline(in, part, ',');)
      if (!part.empty()) ranks.push_back(static_cast<uint32_t>(std::stoul(part)));
  } catch (const std::exception&) {
    return Status::InvalidArgument("--engine-ranks must be comma-separated integers, got '" + text + "'");
  }
  return ranks;
}

}  // namespace

StatusOr<FrontendFlags> FrontendFlagsFromCommandLine() {
  if (FLAGS_model.empty()) return Status::InvalidArgument("--model is required");
  if (FLAGS_port < 0 || FLAGS_port > 65535)
    return Status::InvalidArgument("--port must be in 0..65535, got " + std::to_string(FLAGS_port));
  FrontendFlags flags;
  flags.cluster_key_dir = FLAGS_cluster_key_dir;
  FrontendServerOptions& o = flags.server;
  o.model_dir = FLAGS_model;
  o.tokenizer_dir = FLAGS_tokenizer;
  o.served_model_name = FLAGS_served_model_name;
  o.lora_modules_json = FLAGS_lora_modules;
  o.enable_lora = FLAGS_enable_lora;
  o.max_loras = FLAGS_max_loras;
  o.runtime_lora_updating = serving::RuntimeLoraUpdatingAllowed();
  o.host = FLAGS_host;
  o.port = static_cast<uint16_t>(FLAGS_port);
  o.api_key = FLAGS_api_key;
  o.client_index = FLAGS_client_index;
  o.api_server_count = FLAGS_api_server_count;
  o.metrics_dir = FLAGS_metrics_dir;
  o.input_address = FLAGS_input_address;
  o.output_address = FLAGS_output_address;
  auto ranks = ParseRanks(FLAGS_engine_ranks);
  if (!ranks.ok()) return ranks.status();
  o.engine_ranks = std::move(ranks).value();
  o.coordinator_address = FLAGS_coordinator_address;
  auto routing = ParseDpRouting(FLAGS_dp_routing);
  if (!routing.ok()) return routing.status();
  o.dp_routing = *routing;
  o.dp_prefix_affinity_tokens = FLAGS_dp_prefix_affinity_tokens;
  o.dp_prefix_overload_tokens = FLAGS_dp_prefix_overload_tokens;
  o.max_request_body_bytes = static_cast<size_t>(FLAGS_max_request_body_bytes);
  o.max_logprobs = FLAGS_max_logprobs;
  o.structured_outputs_config = FLAGS_structured_outputs_config;
  o.enable_auto_tool_choice = FLAGS_enable_auto_tool_choice;
  o.tool_call_parser = FLAGS_tool_call_parser;
  o.reasoning_parser = FLAGS_reasoning_parser;
  o.admin_api_key = FLAGS_admin_api_key;
  o.control_address = FLAGS_control_address;
  o.log_stats_interval_s = FLAGS_disable_log_stats ? 0 : FLAGS_log_stats_interval;
  o.chat_template = FLAGS_chat_template_source;
  LLMSERVE_ASSIGN_OR_RETURN(o.cors.allowed_origins, http::ParseCorsList("--allowed-origins", FLAGS_allowed_origins));
  LLMSERVE_ASSIGN_OR_RETURN(o.cors.allowed_methods, http::ParseCorsList("--allowed-methods", FLAGS_allowed_methods));
  LLMSERVE_ASSIGN_OR_RETURN(o.cors.allowed_headers, http::ParseCorsList("--allowed-headers", FLAGS_allowed_headers));
  o.cors.allow_credentials = FLAGS_allow_credentials;
  o.tls = {FLAGS_ssl_certfile, FLAGS_ssl_keyfile, FLAGS_ssl_ca_certs, FLAGS_ssl_cert_reqs};
  if (FLAGS_max_http_connections < 1) return Status::InvalidArgument("--max-http-connections must be at least 1");
  o.max_http_connections = static_cast<size_t>(FLAGS_max_http_connections);
  o.http_keep_alive_timeout_s = HttpKeepAliveTimeoutSeconds();
  if (o.http_keep_alive_timeout_s <= 0)
    return Status::InvalidArgument("--http-keep-alive-timeout (or VLLM_HTTP_TIMEOUT_KEEP_ALIVE) must be positive");
  o.request_id_headers = FLAGS_enable_request_id_headers;
  o.return_tokens_as_token_ids = FLAGS_return_tokens_as_token_ids;
  o.request_log.requests = FLAGS_enable_log_requests;
  o.request_log.outputs = FLAGS_enable_log_outputs;
  if (FLAGS_max_log_len >= 0) o.request_log.max_log_len = FLAGS_max_log_len;
  o.generation_config = FLAGS_generation_config;
  if (FLAGS_runner != "generate" && FLAGS_runner != "pooling")
    return Status::InvalidArgument("--runner must be generate or pooling, got '" + FLAGS_runner + "'");
  o.pooling_runner = FLAGS_runner == "pooling";
  o.pooler_normalize = FLAGS_pooler_normalize;
  o.override_generation_config = FLAGS_override_generation_config;
  LLMSERVE_RETURN_IF_ERROR(o.Validate());
  return flags;
}

}  // namespace llmserve::frontend
