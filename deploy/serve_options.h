#pragma once
// ServeOptions: what `llmserve serve`'s flags ask of the launcher beyond the
// process layout (ServePlan) and the engine configuration: what it passes its
// children and how it supervises them.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status_or.h"

namespace llmserve::deploy {

// What the launcher does when an engine or a frontend dies.
enum class RestartPolicy {
  kNever,      // stop the deployment, exit 1
  kOnFailure,  // start it again
};

// "never" or "on-failure" (the --restart-policy values); anything else is an error.
StatusOr<RestartPolicy> ParseRestartPolicy(std::string_view text);

struct ServeOptions {
  std::string bin_dir;                        // holds llmserve-frontend, -engine, -coordinator
  std::string host = "0.0.0.0";               // the frontends' HTTP address
  int32_t port = 8000;                        // the frontends' HTTP port (shared)
  std::string api_key;                        // "": /v1/* is open
  int64_t max_request_body_bytes = 8 << 20;   // frontends answer 413 beyond
  double engine_ready_timeout_s = 600;        // every engine loads and reports READY within this
  std::string dp_routing = "score";           // frontends' rank choice: score or prefix
  int32_t dp_prefix_blocks = 4;               // with prefix routing: leading KV blocks that pick the rank
  int64_t dp_prefix_overload_tokens = 2048;   // with prefix routing: load margin beyond which affinity yields
  std::string cluster_key_dir;                // CURVE keys for TCP between nodes; "": none
  std::string admin_api_key;                  // "": elastic scaling disabled
  std::string structured_outputs_config;      // --structured-outputs-config JSON for the frontends
  bool enable_auto_tool_choice = false;       // frontends parse tool calls for tool_choice auto
  std::string tool_call_parser;               // --tool-call-parser
  std::string reasoning_parser;               // --reasoning-parser
  RestartPolicy restart_policy = RestartPolicy::kNever;
  double log_stats_interval_s = 10;           // frontends' stats line period; 0: no stats line
  int32_t max_logprobs = 20;                  // most logprobs a request may ask for
  std::string chat_template;                  // template source replacing the model's; "": the model's
  std::string allowed_origins = "[\"*\"]";      // CORS, JSON lists as given (validated)
  std::string allowed_methods = "[\"*\"]";
  std::string allowed_headers = "[\"*\"]";
  bool allow_credentials = false;
  std::string ssl_certfile, ssl_keyfile, ssl_ca_certs;  // the frontends' TLS (vLLM's --ssl-*)
  int32_t ssl_cert_reqs = 0;
  int32_t max_http_connections = 4096;       // per API server; one more is answered 503
  double http_keep_alive_timeout_s = 5;      // idle connections closed after it
  bool enable_request_id_headers = false;     // X-Request-Id on every response
  bool return_tokens_as_token_ids = false;    // logprob tokens spelled "token_id:N"
  bool enable_log_requests = false;           // the frontends' request log
  bool enable_log_outputs = false;
  int32_t max_log_len = -1;                   // -1: whole prompts and outputs in the log
  std::string generation_config = "auto";     // the frontends' sampling defaults (vLLM's flag)
  std::string override_generation_config;     // JSON over them; "": none

  bool operator==(const ServeOptions&) const = default;
};

}  // namespace llmserve::deploy
