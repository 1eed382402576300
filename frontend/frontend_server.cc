#include "frontend/frontend_server.h"

#include <glog/logging.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "frontend/generation_config.h"
#include "frontend/metrics/metrics_route.h"
#include "frontend/openai/elastic_routes.h"
#include "frontend/openai/info_routes.h"
#include "frontend/openai/structured_outputs_request.h"
#include "frontend/serving/chat_output.h"
#include "frontend/serving/embedding_routes.h"
#include "frontend/serving/generation_routes.h"
#include "frontend/serving/lora_routes.h"
#include "frontend/serving/response_routes.h"

namespace llmserve::frontend {

namespace {

// How often an API server sharing its port republishes its metric values when they changed: a scrape
// answered by another server shows them at most about this late.
constexpr std::chrono::milliseconds kMetricsPublishInterval{50};

// The model directory's last component ("/models/qwen3/" -> "qwen3").
std::string DirectoryName(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir.substr(dir.rfind('/') + 1);
}

// Waits, at most `timeout`, until `engine` routes to exactly ranks 0..size-1:
// each is active and has sent its ReadyResponse, and every other rank is inactive.
void WaitUntilRouting(const EngineCoreClient& engine, uint32_t size, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    uint32_t routed = 0;
    bool exact = true;
    for (const auto& e : engine.Engines()) {
      if (e.rank < size) routed += e.active && e.ready ? 1 : 0;
      else exact = exact && !e.active;
    }
    if (exact && routed == size && !engine.scaling()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The pooling runner's facts: config.json's matryoshka keys say whether a
// request's `dimensions` may truncate (an unreadable file: it may not).
serving::PoolingServing LoadPoolingServing(const std::string& model_dir, bool normalize) {
  serving::PoolingServing pooling;
  pooling.enabled = true;
  pooling.normalize = normalize;
  std::ifstream in(model_dir + "/config.json");
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return pooling;
  pooling.matryoshka = config.value("is_matryoshka", false);
  auto dims = config.find("matryoshka_dimensions");
  if (dims != config.end() && dims->is_array())
    for (const auto& d : *dims)
      if (d.is_number_integer()) pooling.matryoshka_dimensions.push_back(d.get<int32_t>());
  return pooling;
}

}  // namespace

Status FrontendServerOptions::Validate() const {
  if (model_dir.empty()) return Status::InvalidArgument("--model is required");
  if (dp_prefix_affinity_tokens < 1 || dp_prefix_overload_tokens < 0)
    return Status::InvalidArgument(
        "--dp-prefix-affinity-tokens must be at least 1 and --dp-prefix-overload-tokens not negative");
  LLMSERVE_RETURN_IF_ERROR(serving::ValidateChatOutputFlags(enable_auto_tool_choice, tool_call_parser, reasoning_parser));
  LLMSERVE_RETURN_IF_ERROR(LoadGenerationDefaults(generation_config, model_dir, override_generation_config).status());
  LLMSERVE_RETURN_IF_ERROR(openai::ParseLoraCards(lora_modules_json, served_model_name).status());
  return openai::ParseStructuredOutputsConfig(structured_outputs_config).status();
}

FrontendServer::FrontendServer(FrontendServerOptions options) : options_(std::move(options)) {
  if (options_.served_model_name.empty()) options_.served_model_name = DirectoryName(options_.model_dir);
}

FrontendServer::~FrontendServer() { Stop(); }

StatusOr<std::unique_ptr<FrontendServer>> FrontendServer::Start(zmq::context_t& context,
                                                                FrontendServerOptions options, bool serve_http) {
  LLMSERVE_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<FrontendServer> server(new FrontendServer(std::move(options)));
  LLMSERVE_RETURN_IF_ERROR(server->StartEngineSide(context));
  server->router_ = server->MakeRouter(context);
  if (serve_http) LLMSERVE_RETURN_IF_ERROR(server->ServeHttp());
  return server;
}

Status FrontendServer::ServeHttp() {
  CHECK(http_ == nullptr) << "ServeHttp called twice";
  http::HttpServerConfig http_config;
  http_config.host = options_.host;
  http_config.port = options_.port;
  http_config.max_request_body_bytes = options_.max_request_body_bytes;
  http_config.reuse_port = options_.api_server_count > 1;
  http_config.tls = options_.tls;
  http_config.max_connections = options_.max_http_connections;
  http_config.keep_alive_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(options_.http_keep_alive_timeout_s * 1000));
  auto http = http::HttpServer::Start(http_config, std::move(router_));
  if (!http.ok()) return http.status();
  http_ = std::move(http).value();
  return Status::Ok();
}

Status FrontendServer::StartEngineSide(zmq::context_t& context) {
  const std::string& tokenizer_dir = options_.tokenizer_dir.empty() ? options_.model_dir : options_.tokenizer_dir;
  auto tokenizer = common::tokenizer::Tokenizer::FromDirectory(tokenizer_dir);
  if (!tokenizer.ok()) return tokenizer.status();
  tokenizer_ = std::move(tokenizer).value();
  if (auto t = ChatTemplate::FromModelDir(tokenizer_dir, {}, options_.chat_template); t.ok()) {
    chat_template_ = std::move(t).value();
  } else if (!options_.chat_template.empty()) {
    return t.status().WithContext("--chat-template");
  } else {
    LOG(WARNING) << "no usable chat template (" << t.status().message() << "); /v1/chat/completions will answer 400";
  }
  metrics_ = std::make_unique<metrics::FrontendMetrics>(
      metrics::FrontendMetricsConfig{options_.served_model_name, options_.engine_ranks,
                                     options_.enable_lora ? std::max(options_.max_loras, 1) : 0});
  if (!options_.metrics_dir.empty()) {
    auto directory = metrics::SnapshotDirectory::Open(options_.metrics_dir, options_.client_index);
    if (!directory.ok()) return directory.status();
    merged_scrape_ = std::make_unique<metrics::MergedScrape>(metrics_.get(), std::move(directory).value(),
                                                             kMetricsPublishInterval);
  }
  EngineCoreClient::Options client_options{options_.client_index, options_.input_address, options_.output_address,
                                           options_.engine_ranks};
  client_options.coordinator_address = options_.coordinator_address;
  client_options.client_count = std::max(options_.api_server_count, 1);
  client_options.lb.routing = options_.dp_routing;
  client_options.lb.affinity_tokens = options_.dp_prefix_affinity_tokens;
  client_options.lb.affinity_threshold = options_.dp_prefix_overload_tokens;
  auto client = EngineCoreClient::Start(context, client_options);
  if (!client.ok()) return client.status();
  client_ = std::move(client).value();
  client_->SetStatsListener([metrics = metrics_.get()](uint32_t rank, const proto::SchedulerStats& stats) {
    metrics->RecordSchedulerStats(rank, stats);
  });
  serving_.engine = client_.get();
  serving_.tokenizer = tokenizer_.get();
  serving_.chat_template = chat_template_ ? &*chat_template_ : nullptr;
  serving_.served_model_names = {options_.served_model_name};
  serving::UtilityCaller call_utility;
  if (options_.enable_lora && options_.runtime_lora_updating) {
    call_utility = [client = client_.get()](const std::string& method, const std::vector<std::string>& args,
                                            std::chrono::milliseconds timeout) {
      return client->CallUtility(method, args, timeout);
    };
  }
  loras_ = std::make_unique<serving::RuntimeLoras>(
      openai::ParseLoraCards(options_.lora_modules_json, options_.served_model_name).value(),  // validated in Start
      options_.served_model_name, std::move(call_utility));
  serving_.loras = loras_.get();
  client_->SetReadyListener([metrics = metrics_.get(), loras = loras_.get()](uint32_t rank,
                                                                            const proto::ReadyResponse& ready) {
    metrics->RecordEngineReady(rank, ready.cache(), ready.num_kv_blocks());
    if (loras->runtime_updating()) loras->OnRankReady();
  });
  for (const EngineState& e : client_->Engines())  // announced before the listener was set
    if (e.ready) metrics_->RecordEngineReady(e.rank, e.cache, e.num_kv_blocks);
  serving_.defaults = LoadGenerationDefaults(options_.generation_config, options_.model_dir,
                                             options_.override_generation_config).value();  // validated in Start
  serving_.eos_token_ids = tokenizer_->eos_token_ids();
  serving_.parse_options.max_logprobs = options_.max_logprobs;
  serving_.parse_options.structured_outputs =
      openai::ParseStructuredOutputsConfig(options_.structured_outputs_config).value();  // validated in Start
  serving_.metrics = metrics_.get();
  if (options_.enable_auto_tool_choice) {
    tool_parser_ = tool_parsers::MakeToolParser(options_.tool_call_parser).value();  // validated in Start
    serving_.tool_parser = tool_parser_.get();
  }
  serving_.reasoning_parser = options_.reasoning_parser;
  serving_.request_log = options_.request_log;
  serving_.responses = &responses_;
  if (options_.pooling_runner) serving_.pooling = LoadPoolingServing(options_.model_dir, options_.pooler_normalize);
  serving_.parse_options.return_tokens_as_token_ids = options_.return_tokens_as_token_ids;
  if (options_.log_stats_interval_s > 0) {
    const std::string prefix =
        options_.api_server_count > 1 ? "API server " + std::to_string(options_.client_index) + ": " : "";
    stats_logger_ = std::make_unique<metrics::StatsLogger>(
        metrics_.get(), std::chrono::milliseconds(static_cast<int64_t>(options_.log_stats_interval_s * 1000)), prefix);
  }
  return Status::Ok();
}

http::Router FrontendServer::MakeRouter(zmq::context_t& context) {
  http::Router router;
  router.set_cors(options_.cors);
  router.set_request_id_headers(options_.request_id_headers);
  router.set_observer([metrics = metrics_.get()](const std::string& handler, const std::string& method, int status,
                                                 double seconds) {
    metrics->RecordHttpRequest(handler, method, status, seconds);
  });
  EngineCoreClient* engine = client_.get();
  openai::InfoRoutesConfig info;
  info.served_model_names = serving_.served_model_names;
  info.model_root = options_.model_dir;
  info.lora_cards = [loras = loras_.get()] { return loras->Cards(); };
  info.max_model_len = [engine] { return engine->max_model_len(); };
  info.version = "0.1.0";
  info.api_key = options_.api_key;
  info.created = static_cast<int64_t>(std::time(nullptr));
  info.healthy = [engine] { return engine->IsReady() && !engine->IsDead(); };
  info.dead_ranks = [engine] {
    std::vector<uint32_t> dead;
    for (const auto& e : engine->Engines())
      if (e.dead && e.active) dead.push_back(e.rank);  // a rank removed by a scale-down is not missed
    return dead;
  };
  openai::RegisterInfoRoutes(info, &router);
  if (!options_.control_address.empty())
    scale_control_ = std::make_unique<ScaleControlClient>(context, options_.control_address);
  openai::ElasticRoutesConfig elastic;
  elastic.admin_api_key = options_.admin_api_key;
  if (scale_control_) {
    elastic.scale = [control = scale_control_.get(), engine](const proto::ScaleRequest& request,
                                                             std::function<void(const proto::ScaleResponse&)> done) {
      const uint32_t size = request.new_data_parallel_size();
      return control->Scale(request, [engine, size, done = std::move(done)](const proto::ScaleResponse& response) {
        // The launcher answers once the coordinator published the membership;
        // this frontend's I/O thread may not have applied it (or a new rank's
        // ReadyResponse) yet. Answer when a request sent now is routed by it
        // and /is_scaling_elastic_ep answers false.
        if (response.ok()) WaitUntilRouting(*engine, size, std::chrono::seconds(5));
        done(response);
      });
    };
  }
  elastic.is_scaling = [engine, control = scale_control_.get()] {
    return (control && control->busy()) || engine->scaling();
  };
  openai::RegisterElasticRoutes(elastic, &router);
  serving::RegisterGenerationRoutes(serving_, &router);
  serving::RegisterEmbeddingRoutes(serving_, &router);
  serving::RegisterStoredResponseRoutes(&responses_, &router);
  if (loras_->runtime_updating()) {
    LOG(WARNING) << "LoRA dynamic loading & unloading is enabled in the API server. This should ONLY be used for "
                    "local development!";
    serving::RegisterLoraRoutes(loras_.get(), &router);
  }
  if (merged_scrape_) {
    metrics::RegisterMetricsRoute([scrape = merged_scrape_.get()] { return scrape->Render(); }, &router);
  } else {
    metrics::RegisterMetricsRoute(metrics_.get(), &router);
  }
  return router;
}

void FrontendServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stats_logger_.reset();
  if (http_) http_->Stop();
  scale_control_.reset();
  if (client_) client_->Stop();
  merged_scrape_.reset();  // its last snapshot holds everything this server counted
}

}  // namespace llmserve::frontend
