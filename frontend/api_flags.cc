#include "frontend/api_flags.h"

#include <cstdlib>

DEFINE_bool(enable_request_id_headers, false,
            "Add X-Request-Id to every response: the request's own X-Request-Id, else a random id.");
DEFINE_bool(return_tokens_as_token_ids, false,
            "Spell logprob tokens as \"token_id:N\" for every request (a request may ask with "
            "return_tokens_as_token_ids).");
DEFINE_bool(enable_log_requests, false, "Log each request: id, prompt, sampling parameters, prompt token ids.");
DEFINE_bool(enable_log_outputs, false, "Log each finished choice: id, output text, output token ids, finish reason.");
DEFINE_int32(max_log_len, -1, "Characters of prompts / outputs and token ids the request log keeps (-1: all).");
DEFINE_string(generation_config, "auto",
              "Sampling defaults: auto (the model's generation_config.json), vllm (none), or a folder holding a "
              "generation_config.json.");
DEFINE_string(override_generation_config, "",
              "JSON object of sampling defaults over --generation-config's, e.g. '{\"temperature\": 0.5}' "
              "(temperature, top_p, top_k, min_p, repetition_penalty, max_new_tokens).");
DEFINE_string(allowed_origins, "[\"*\"]", "CORS: origins allowed, as a JSON list (vLLM's format; \"*\": any).");
DEFINE_string(allowed_methods, "[\"*\"]", "CORS: methods a preflight may ask for, as a JSON list (\"*\": any).");
DEFINE_string(allowed_headers, "[\"*\"]", "CORS: request headers a preflight may ask for, as a JSON list (\"*\": any).");
DEFINE_bool(allow_credentials, false, "CORS: allow credentials (the origin is then echoed instead of \"*\").");
DEFINE_string(ssl_certfile, "", "TLS: PEM certificate chain; with it the API server speaks HTTPS only.");
DEFINE_string(ssl_keyfile, "", "TLS: PEM private key of --ssl-certfile (default: the key inside that file).");
DEFINE_string(ssl_ca_certs, "", "TLS: PEM CA bundle that client certificates are checked against.");
DEFINE_int32(ssl_cert_reqs, 0,
             "TLS client certificates, as Python's ssl module numbers them: 0 none asked for, 1 checked when "
             "sent, 2 required (1 and 2 need --ssl-ca-certs).");
DEFINE_int32(max_http_connections, 4096,
             "Open HTTP connections each API server keeps; one more is answered 503 and closed.");
DEFINE_double(http_keep_alive_timeout, -1,
              "Seconds an idle connection, or one still sending its request header, is kept open (default: "
              "VLLM_HTTP_TIMEOUT_KEEP_ALIVE when set, else 5, as vLLM's uvicorn).");
DEFINE_int32(max_logprobs, 20, "Most logprobs (top_logprobs, prompt_logprobs) a request may ask for.");
DEFINE_bool(disable_log_stats, false, "Do not print the periodic stats line (throughput, running / waiting, KV usage).");
DEFINE_double(log_stats_interval, 10,
              "Seconds between stats lines (vLLM's VLLM_LOG_STATS_INTERVAL, which sets the default when present).");

namespace llmserve::frontend {

double HttpKeepAliveTimeoutSeconds() {
  if (FLAGS_http_keep_alive_timeout >= 0) return FLAGS_http_keep_alive_timeout > 0 ? FLAGS_http_keep_alive_timeout : -1;
  const char* env = std::getenv("VLLM_HTTP_TIMEOUT_KEEP_ALIVE");
  if (env == nullptr) return 5;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  return end != env && *end == '\0' && v > 0 ? v : -1;
}

}  // namespace llmserve::frontend
