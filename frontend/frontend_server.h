#pragma once
// FrontendServer: one API server — the model's tokenizer and chat template,
// the engine client (ZMQ to the engine cores), the OpenAI, admin and metrics
// routes, and the HTTP server — built from FrontendServerOptions.
// llmserve-frontend's main builds one from its flags and stops it on SIGTERM;
// tests construct it directly and play the engines' side of the sockets.

#include <zmq.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "frontend/chat_template/chat_template.h"
#include "frontend/dp_load_balancer.h"
#include "frontend/engine_core_client.h"
#include "frontend/http/http_server.h"
#include "frontend/metrics/frontend_metrics.h"
#include "frontend/metrics/merged_scrape.h"
#include "frontend/metrics/stats_log.h"
#include "frontend/scale_control_client.h"
#include "frontend/serving/serving_context.h"
#include "base/status_or.h"

namespace llmserve::frontend {

struct FrontendServerOptions {
  std::string model_dir;          // Hugging Face model directory: tokenizer, chat template, generation_config.json
  std::string tokenizer_dir;      // tokenizer and chat template; "": model_dir's
  std::string served_model_name;  // the model's name in the API; "": the model directory's name
  std::string lora_modules_json;  // LoRA adapters (openai::ParseLoraCards); "": none
  bool enable_lora = false;          // --enable-lora: the engines serve LoRA adapters
  int32_t max_loras = 1;             // --max-loras (label max_lora of vllm:lora_requests_info)
  bool runtime_lora_updating = false;  // VLLM_ALLOW_RUNTIME_LORA_UPDATING: /v1/(un)load_lora_adapter (with enable_lora)
  std::string host = "0.0.0.0";   // address the HTTP server listens on
  uint16_t port = 8000;           // 0: an ephemeral port (see FrontendServer::port)
  std::string api_key;            // "": /v1/* needs no Authorization header
  int32_t client_index = 0;       // this server's index among the API servers
  int32_t api_server_count = 1;   // API servers sharing the engines (> 1: SO_REUSEPORT)
  std::string metrics_dir;         // API servers' shared metric snapshots: /metrics shows all; "": this one's
  std::string input_address = "tcp://127.0.0.1:*";   // bound: requests to engines (ROUTER)
  std::string output_address = "tcp://127.0.0.1:*";  // bound: outputs from engines (PULL)
  std::vector<uint32_t> engine_ranks = {0};          // data-parallel ranks routed to
  std::string coordinator_address;                   // DP coordinator's XPUB; "": none
  DpRouting dp_routing = DpRouting::kScore;          // rank choice for requests without a pinned rank
  int32_t dp_prefix_affinity_tokens = 64;            // with kPrefix: leading prompt tokens that pick the rank
  int64_t dp_prefix_overload_tokens = 2048;          // with kPrefix: load margin beyond which affinity yields
  size_t max_request_body_bytes = 8 << 20;           // larger bodies get HTTP 413
  size_t max_http_connections = 4096;                // one more is answered 503
  double http_keep_alive_timeout_s = 5;              // idle connections (and slow headers) closed after it
  int32_t max_logprobs = 20;                         // most top logprobs a request may ask for
  std::string structured_outputs_config;             // vLLM's --structured-outputs-config JSON; "": defaults
  bool enable_auto_tool_choice = false;              // tool_choice "auto" parses calls with tool_call_parser
  std::string tool_call_parser;                      // hermes, llama3_json, mistral, deepseek_v3; "": none
  std::string reasoning_parser;                      // qwen3, deepseek_r1; "": no reasoning_content
  std::string admin_api_key;                         // "": elastic scaling answers 403
  std::string control_address;                       // the launcher's control socket; "": no elastic scaling
  double log_stats_interval_s = 0;                   // > 0: the stats line every this many seconds
  std::string chat_template;                         // template source replacing the model's; "": the model's
  http::TlsOptions tls;                              // HTTPS when it has a certificate
  http::CorsPolicy cors;                             // CORS headers and preflights (vLLM's defaults: any origin)
  bool request_id_headers = false;                   // X-Request-Id on every response
  bool return_tokens_as_token_ids = false;           // logprob tokens spelled "token_id:N" for every request
  serving::RequestLogOptions request_log;            // request and output log lines
  std::string generation_config = "auto";           // sampling defaults: auto (the model's), vllm (none) or a folder
  std::string override_generation_config;            // JSON object of defaults over those; "": none
  bool pooling_runner = false;                       // the engines embed (--runner pooling)
  bool pooler_normalize = true;                      // with pooling_runner: normalize unless a request says

  // InvalidArgument naming the first option a user got wrong.
  Status Validate() const;
};

class FrontendServer {
 public:
  // Validates `options`, loads the tokenizer (the chat template when the model
  // has a usable one), starts the engine client and, with `serve_http`, serves
  // HTTP (else ServeHttp does, later). Sockets use `context`, which must
  // outlive the server.
  static StatusOr<std::unique_ptr<FrontendServer>> Start(zmq::context_t& context, FrontendServerOptions options,
                                                         bool serve_http = true);
  // Starts serving HTTP, for a server started without. Once only.
  Status ServeHttp();
  // Stops, if Stop() was not called.
  ~FrontendServer();
  FrontendServer(const FrontendServer&) = delete;
  FrontendServer& operator=(const FrontendServer&) = delete;

  // The port the HTTP server listens on (the ephemeral one when options.port was 0);
  // once it serves HTTP.
  uint16_t port() const { return http_->port(); }
  // The engine client (its bound addresses are where engines connect).
  EngineCoreClient& engine() { return *client_; }

  // Stops accepting, lets in-flight requests finish (bounded), then closes the
  // engine client. Idempotent.
  void Stop();

 private:
  explicit FrontendServer(FrontendServerOptions options);
  // The tokenizer, chat template, metrics and engine client.
  Status StartEngineSide(zmq::context_t& context);
  // Every route, on a router for the HTTP server.
  http::Router MakeRouter(zmq::context_t& context);

  FrontendServerOptions options_;
  std::unique_ptr<common::tokenizer::Tokenizer> tokenizer_;
  std::optional<ChatTemplate> chat_template_;
  std::unique_ptr<tool_parsers::ToolParser> tool_parser_;  // null without --enable-auto-tool-choice
  std::unique_ptr<metrics::FrontendMetrics> metrics_;  // this server's requests and the engine stats sent to it
  std::unique_ptr<metrics::MergedScrape> merged_scrape_;  // null without options_.metrics_dir
  std::unique_ptr<EngineCoreClient> client_;
  serving::ResponseStore responses_;                    // /v1/responses' previous_response_id
  std::unique_ptr<serving::RuntimeLoras> loras_;        // the LoRA adapters served now
  serving::ServingContext serving_;                     // the generation routes point at it
  std::unique_ptr<ScaleControlClient> scale_control_;   // null without a control address
  http::Router router_;  // MakeRouter's, until ServeHttp hands it to http_
  std::unique_ptr<http::HttpServer> http_;
  std::unique_ptr<metrics::StatsLogger> stats_logger_;  // null without log_stats_interval_s
  bool stopped_ = false;
};

}  // namespace llmserve::frontend
