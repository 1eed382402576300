// llmserve-frontend: the OpenAI-compatible HTTP server. Started by
// `llmserve serve` (one per --api-server-count); tokenizes and renders chat
// templates, routes requests to the engine cores over ZeroMQ, and streams
// detokenized text back.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/process/termination_signals.h"
#include "common/flags.h"
#include "common/ipc/cluster_key.h"
#include "common/tokenizer/tokenizer.h"
#include "frontend/chat_template/chat_template.h"
#include "frontend/engine_core_client.h"
#include "frontend/http/http_server.h"
#include "frontend/metrics/frontend_metrics.h"
#include "frontend/metrics/metrics_route.h"
#include "frontend/openai/elastic_routes.h"
#include "frontend/openai/info_routes.h"
#include "frontend/scale_control_client.h"
#include "frontend/serving/generation_routes.h"

DEFINE_string(model, "", "Hugging Face model directory (tokenizer, chat template, generation_config.json).");
DEFINE_string(served_model_name, "", "Model name in the API; defaults to the model directory's name.");
DEFINE_string(host, "0.0.0.0", "Address the HTTP server listens on.");
DEFINE_int32(port, 8000, "Port the HTTP server listens on.");
DEFINE_string(api_key, "", "If set, /v1/* requests must send 'Authorization: Bearer KEY'.");
DEFINE_int32(client_index, 0, "Index of this frontend among the API servers (--api-server-count).");
DEFINE_int32(api_server_count, 1, "Number of API servers sharing the engines.");
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
DEFINE_int32(max_logprobs, 20, "Most top logprobs a request may ask for.");
DEFINE_string(admin_api_key, "",
              "Key for the admin endpoints (POST /scale_elastic_ep), sent as 'Authorization: Bearer KEY'; "
              "empty: elastic scaling is disabled (403).");
DEFINE_string(control_address, "", "The launcher's control socket for elastic scaling (set by `llmserve serve`).");

namespace {

using namespace llmserve;

// Sampling defaults from generation_config.json (absent file: none).
frontend::openai::GenerationDefaults LoadDefaults(const std::string& dir) {
  frontend::openai::GenerationDefaults d;
  std::ifstream in(dir + "/generation_config.json");
  if (!in) return d;
  std::stringstream text;
  text << in.rdbuf();
  auto json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return d;
  if (json.contains("temperature") && json["temperature"].is_number()) d.temperature = json["temperature"].get<double>();
  if (json.contains("top_p") && json["top_p"].is_number()) d.top_p = json["top_p"].get<double>();
  if (json.contains("top_k") && json["top_k"].is_number_integer()) d.top_k = json["top_k"].get<int32_t>();
  if (json.contains("min_p") && json["min_p"].is_number()) d.min_p = json["min_p"].get<double>();
  if (json.contains("repetition_penalty") && json["repetition_penalty"].is_number())
    d.repetition_penalty = json["repetition_penalty"].get<double>();
  return d;
}

std::vector<uint32_t> ParseRanks(const std::string& text) {
  std::vector<uint32_t> ranks;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) ranks.push_back(static_cast<uint32_t>(std::stoul(part)));
  return ranks;
}

// Waits, at most `timeout`, until `engine` routes to exactly ranks 0..size-1:
// each is active and has sent its ReadyResponse, and every other rank is inactive.
void WaitUntilRouting(const frontend::EngineCoreClient& engine, uint32_t size, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto engines = engine.Engines();
    uint32_t routed = 0;
    bool exact = true;
    for (const auto& e : engines) {
      if (e.rank < size) routed += e.active && e.ready ? 1 : 0;
      else exact = exact && !e.active;
    }
    if (exact && routed == size) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

int main(int argc, char** argv) {
  common::InitProcess(&argc, &argv,
      "llmserve-frontend: OpenAI-compatible HTTP server in front of the engine cores.\n"
      "Started by `llmserve serve`, which passes these flags.\n"
      "usage: llmserve-frontend --model DIR [--host H] [--port P] [--api-key KEY] ...");
  if (FLAGS_model.empty()) {
    LOG(ERROR) << "--model is required";
    return 2;
  }
  if (FLAGS_port < 0 || FLAGS_port > 65535) {
    LOG(ERROR) << "--port must be in 0..65535, got " << FLAGS_port;
    return 2;
  }
  const sigset_t set = common::BlockTerminationSignals();  // main() waits for them at the end

  auto tokenizer = common::tokenizer::Tokenizer::FromDirectory(FLAGS_model);
  if (!tokenizer.ok()) {
    LOG(ERROR) << tokenizer.status().message();
    return 1;
  }
  std::optional<frontend::ChatTemplate> chat_template;
  if (auto t = frontend::ChatTemplate::FromModelDir(FLAGS_model); t.ok()) {
    chat_template = std::move(t).value();
  } else {
    LOG(WARNING) << "no usable chat template (" << t.status().message() << "); /v1/chat/completions will answer 400";
  }
  std::vector<uint32_t> ranks;
  try {
    ranks = ParseRanks(FLAGS_engine_ranks);
  } catch (const std::exception&) {
    LOG(ERROR) << "--engine-ranks must be comma-separated integers, got '" << FLAGS_engine_ranks << "'";
    return 2;
  }
  std::string name = FLAGS_served_model_name;
  if (name.empty()) {
    name = FLAGS_model;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    name = name.substr(name.rfind('/') + 1);
  }
  // This frontend's own view: the requests it served and the engine stats sent to it.
  frontend::metrics::FrontendMetrics metrics({name, ranks});
  auto routing = frontend::ParseDpRouting(FLAGS_dp_routing);
  if (!routing.ok()) {
    LOG(ERROR) << routing.status().message();
    return 2;
  }
  if (FLAGS_dp_prefix_affinity_tokens < 1 || FLAGS_dp_prefix_overload_tokens < 0) {
    LOG(ERROR) << "--dp-prefix-affinity-tokens must be at least 1 and --dp-prefix-overload-tokens not negative";
    return 2;
  }
  frontend::EngineCoreClient::Options client_options{FLAGS_client_index, FLAGS_input_address, FLAGS_output_address,
                                                     ranks};
  client_options.coordinator_address = FLAGS_coordinator_address;
  client_options.client_count = std::max(FLAGS_api_server_count, 1);
  client_options.lb.routing = *routing;
  client_options.lb.affinity_tokens = FLAGS_dp_prefix_affinity_tokens;
  client_options.lb.affinity_threshold = FLAGS_dp_prefix_overload_tokens;
  zmq::context_t zmq_context;
  auto authenticator = llmserve::common::ipc::SecureProcess(FLAGS_cluster_key_dir, zmq_context);
  if (!authenticator.ok()) {
    LOG(ERROR) << authenticator.status().message();
    return 2;
  }
  auto client = frontend::EngineCoreClient::Start(zmq_context, client_options);
  if (!client.ok()) {
    LOG(ERROR) << client.status().message();
    return 1;
  }
  (*client)->SetStatsListener([&metrics](uint32_t rank, const proto::SchedulerStats& stats) {
    metrics.RecordSchedulerStats(rank, stats);
  });
  frontend::serving::ServingContext context;
  context.engine = client->get();
  context.tokenizer = tokenizer->get();
  context.chat_template = chat_template ? &*chat_template : nullptr;
  context.served_model_names = {name};
  context.defaults = LoadDefaults(FLAGS_model);
  context.eos_token_ids = (*tokenizer)->eos_token_ids();
  context.parse_options.max_logprobs = FLAGS_max_logprobs;
  context.metrics = &metrics;

  frontend::http::Router router;
  frontend::openai::InfoRoutesConfig info;
  info.served_model_names = context.served_model_names;
  info.model_root = FLAGS_model;
  info.version = "0.1.0";
  info.api_key = FLAGS_api_key;
  info.created = static_cast<int64_t>(std::time(nullptr));
  frontend::EngineCoreClient* engine = client->get();
  info.healthy = [engine] { return engine->IsReady() && !engine->IsDead(); };
  info.dead_ranks = [engine] {
    std::vector<uint32_t> dead;
    for (const auto& e : engine->Engines())
      if (e.dead && e.active) dead.push_back(e.rank);  // a rank removed by a scale-down is not missed
    return dead;
  };
  frontend::openai::RegisterInfoRoutes(info, &router);
  std::unique_ptr<frontend::ScaleControlClient> scale_control;
  if (!FLAGS_control_address.empty())
    scale_control = std::make_unique<frontend::ScaleControlClient>(zmq_context, FLAGS_control_address);
  frontend::openai::ElasticRoutesConfig elastic;
  elastic.admin_api_key = FLAGS_admin_api_key;
  if (scale_control) {
    elastic.scale = [control = scale_control.get(), engine](const proto::ScaleRequest& request,
                                                            std::function<void(const proto::ScaleResponse&)> done) {
      const uint32_t size = request.new_data_parallel_size();
      return control->Scale(request, [engine, size, done = std::move(done)](const proto::ScaleResponse& response) {
        // The launcher answers once the coordinator published the membership;
        // this frontend's I/O thread may not have applied it (or a new rank's
        // ReadyResponse) yet. Answer when a request sent now is routed by it.
        if (response.ok()) WaitUntilRouting(*engine, size, std::chrono::seconds(5));
        done(response);
      });
    };
  }
  elastic.is_scaling = [engine, control = scale_control.get()] {
    return (control && control->busy()) || engine->scaling();
  };
  frontend::openai::RegisterElasticRoutes(elastic, &router);
  frontend::serving::RegisterGenerationRoutes(context, &router);
  frontend::metrics::RegisterMetricsRoute(&metrics, &router);

  frontend::http::HttpServerConfig http_config;
  http_config.host = FLAGS_host;
  http_config.port = static_cast<uint16_t>(FLAGS_port);
  http_config.max_request_body_bytes = static_cast<size_t>(FLAGS_max_request_body_bytes);
  http_config.reuse_port = FLAGS_api_server_count > 1;
  auto server = frontend::http::HttpServer::Start(http_config, std::move(router));
  if (!server.ok()) {
    LOG(ERROR) << server.status().message();
    return 1;
  }
  LOG(INFO) << "frontend " << FLAGS_client_index << " listening on " << FLAGS_host << ":" << (*server)->port();
  int sig = 0;
  sigwait(&set, &sig);
  LOG(INFO) << "frontend " << FLAGS_client_index << ": " << strsignal(sig) << "; finishing in-flight requests";
  (*server)->Stop();
  scale_control.reset();
  (*client)->Stop();
  return 0;
}
