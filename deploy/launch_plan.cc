#include "deploy/launch_plan.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace llmserve::deploy {

std::vector<ChildId> LaunchPlan::Children() const {
  std::vector<ChildId> children;
  if (!plan_.headless) {
    if (plan_.run_coordinator) children.push_back(ChildId::Coordinator());
    for (int i = 0; i < plan_.api_server_count; ++i) children.push_back(ChildId::Frontend(static_cast<uint32_t>(i)));
  }
  for (uint32_t rank : plan_.local_ranks) children.push_back(ChildId::Engine(rank));
  return children;
}

std::vector<std::string> LaunchPlan::Argv(const ChildId& id, int data_parallel_size) const {
  switch (id.role) {
    case ChildRole::kCoordinator: return CoordinatorArgv();
    case ChildRole::kFrontend: return FrontendArgv(id.index, data_parallel_size);
    case ChildRole::kEngine: return EngineArgv(id.index);
  }
  return {};
}

bool LaunchPlan::IsLocal(uint32_t rank) const {
  return std::find(plan_.local_ranks.begin(), plan_.local_ranks.end(), rank) != plan_.local_ranks.end();
}

proto::HandshakeReply LaunchPlan::HandshakeReply() const {
  proto::HandshakeReply reply;
  *reply.mutable_config() = config_;
  for (int i = 0; i < plan_.api_server_count; ++i) {
    reply.mutable_addresses()->add_inputs(plan_.frontend_inputs[static_cast<size_t>(i)].address);
    reply.mutable_addresses()->add_outputs(plan_.frontend_outputs[static_cast<size_t>(i)].address);
  }
  if (plan_.run_coordinator) {
    reply.mutable_addresses()->set_coordinator_input(plan_.coordinator_engine_publish_address);
    reply.mutable_addresses()->set_coordinator_output(plan_.coordinator_engine_stats_address);
    reply.mutable_addresses()->set_frontend_stats_publish_address(plan_.coordinator_frontend_address);
  }
  return reply;
}

std::vector<std::string> LaunchPlan::EngineArgv(uint32_t rank) const {
  return {options_.bin_dir + "/llmserve-engine",
          "--handshake-address=" + plan_.handshake_address,
          "--data-parallel-rank=" + std::to_string(rank),
          plan_.headless ? "--headless" : "--noheadless",
          plan_.headless ? "--nolocal" : "--local",
          "--engine-ready-timeout=" + std::to_string(static_cast<int>(options_.engine_ready_timeout_s)),
          "--cluster-key-dir=" + options_.cluster_key_dir};
}

std::vector<std::string> LaunchPlan::FrontendArgv(uint32_t index, int data_parallel_size) const {
  std::string ranks;
  for (int r = 0; r < data_parallel_size; ++r) {
    if (r > 0) ranks += ',';
    ranks += std::to_string(r);
  }
  std::vector<std::string> argv = {
      options_.bin_dir + "/llmserve-frontend",
      "--model=" + config_.model().model_dir(),
      "--served-model-name=" + config_.model().served_model_name(),
      "--host=" + options_.host,
      "--port=" + std::to_string(options_.port),
      "--client-index=" + std::to_string(index),
      "--api-server-count=" + std::to_string(plan_.api_server_count),
      "--input-address=" + plan_.frontend_inputs[index].bind,
      "--output-address=" + plan_.frontend_outputs[index].bind,
      "--engine-ranks=" + ranks,
      "--max-request-body-bytes=" + std::to_string(options_.max_request_body_bytes),
      "--max-logprobs=" + std::to_string(options_.max_logprobs)};
  if (!plan_.metrics_dir.empty()) argv.push_back("--metrics-dir=" + plan_.metrics_dir);
  if (!options_.api_key.empty()) argv.push_back("--api-key=" + options_.api_key);
  if (!options_.chat_template.empty()) argv.push_back("--chat-template-source=" + options_.chat_template);
  if (!config_.model().tokenizer().empty()) argv.push_back("--tokenizer=" + config_.model().tokenizer());
  if (config_.lora().enable_lora()) argv.push_back("--enable-lora");
  if (config_.lora().enable_lora()) argv.push_back("--max-loras=" + std::to_string(config_.lora().max_loras()));
  if (config_.lora().enable_lora() && config_.lora().modules_size() > 0) {
    nlohmann::json modules = nlohmann::json::array();
    for (const auto& m : config_.lora().modules())
      modules.push_back({{"name", m.name()}, {"path", m.path()}, {"base_model_name", m.base_model_name()}});
    argv.push_back("--lora-modules=" + modules.dump());
  }
  if (config_.model().has_pooler()) {
    argv.push_back("--runner=pooling");
    argv.push_back(config_.model().pooler().normalize() ? "--pooler_normalize" : "--nopooler_normalize");
  }
  argv.push_back("--allowed-origins=" + options_.allowed_origins);
  argv.push_back("--allowed-methods=" + options_.allowed_methods);
  argv.push_back("--allowed-headers=" + options_.allowed_headers);
  if (options_.allow_credentials) argv.push_back("--allow-credentials");
  if (!options_.ssl_certfile.empty()) argv.push_back("--ssl-certfile=" + options_.ssl_certfile);
  if (!options_.ssl_keyfile.empty()) argv.push_back("--ssl-keyfile=" + options_.ssl_keyfile);
  if (!options_.ssl_ca_certs.empty()) argv.push_back("--ssl-ca-certs=" + options_.ssl_ca_certs);
  if (options_.ssl_cert_reqs != 0) argv.push_back("--ssl-cert-reqs=" + std::to_string(options_.ssl_cert_reqs));
  argv.push_back("--max-http-connections=" + std::to_string(options_.max_http_connections));
  argv.push_back("--http-keep-alive-timeout=" + std::to_string(options_.http_keep_alive_timeout_s));
  if (options_.enable_request_id_headers) argv.push_back("--enable-request-id-headers");
  if (options_.return_tokens_as_token_ids) argv.push_back("--return-tokens-as-token-ids");
  if (options_.enable_log_requests) argv.push_back("--enable-log-requests");
  if (options_.enable_log_outputs) argv.push_back("--enable-log-outputs");
  argv.push_back("--max-log-len=" + std::to_string(options_.max_log_len));
  argv.push_back("--generation-config=" + options_.generation_config);
  if (!options_.override_generation_config.empty())
    argv.push_back("--override-generation-config=" + options_.override_generation_config);
  if (!options_.structured_outputs_config.empty())
    argv.push_back("--structured-outputs-config=" + options_.structured_outputs_config);
  if (options_.enable_auto_tool_choice) argv.push_back("--enable-auto-tool-choice");
  if (!options_.tool_call_parser.empty()) argv.push_back("--tool-call-parser=" + options_.tool_call_parser);
  if (!options_.reasoning_parser.empty()) argv.push_back("--reasoning-parser=" + options_.reasoning_parser);
  argv.push_back("--cluster-key-dir=" + options_.cluster_key_dir);
  if (options_.log_stats_interval_s > 0)
    argv.push_back("--log-stats-interval=" + std::to_string(options_.log_stats_interval_s));
  else
    argv.push_back("--disable-log-stats");
  if (plan_.run_coordinator) argv.push_back("--coordinator-address=" + plan_.coordinator_frontend_address);
  if (!plan_.control_address.empty()) {
    argv.push_back("--control-address=" + plan_.control_address);
    argv.push_back("--admin-api-key=" + options_.admin_api_key);
  }
  const uint32_t block_size = config_.cache().block_size() > 0 ? config_.cache().block_size() : 16;
  argv.push_back("--dp-routing=" + options_.dp_routing);
  argv.push_back("--dp-prefix-affinity-tokens=" +
                 std::to_string(options_.dp_prefix_blocks * static_cast<int64_t>(block_size)));
  argv.push_back("--dp-prefix-overload-tokens=" + std::to_string(options_.dp_prefix_overload_tokens));
  return argv;
}

std::vector<std::string> LaunchPlan::CoordinatorArgv() const {
  return {options_.bin_dir + "/llmserve-coordinator",
          "--data-parallel-size=" + std::to_string(plan_.data_parallel_size),
          "--frontend-publish-address=" + plan_.coordinator_frontend_address,
          "--engine-publish-address=" + plan_.coordinator_engine_publish_bind,
          "--engine-stats-address=" + plan_.coordinator_engine_stats_bind,
          "--cluster-key-dir=" + options_.cluster_key_dir};
}

}  // namespace llmserve::deploy
