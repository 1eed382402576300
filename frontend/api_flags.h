#pragma once
// Flags that `llmserve serve` takes and passes on to each `llmserve-frontend`
// under the same names: defined once here, read by both.

#include <gflags/gflags.h>

DECLARE_bool(enable_request_id_headers);
DECLARE_bool(return_tokens_as_token_ids);
DECLARE_bool(enable_log_requests);
DECLARE_bool(enable_log_outputs);
DECLARE_int32(max_log_len);
DECLARE_string(generation_config);
DECLARE_string(override_generation_config);
DECLARE_string(allowed_origins);
DECLARE_string(allowed_methods);
DECLARE_string(allowed_headers);
DECLARE_bool(allow_credentials);
DECLARE_string(ssl_certfile);
DECLARE_string(ssl_keyfile);
DECLARE_string(ssl_ca_certs);
DECLARE_int32(ssl_cert_reqs);
DECLARE_int32(max_http_connections);
DECLARE_double(http_keep_alive_timeout);
DECLARE_int32(max_logprobs);
DECLARE_bool(disable_log_stats);
DECLARE_double(log_stats_interval);

namespace llmserve::frontend {

// --http-keep-alive-timeout, else VLLM_HTTP_TIMEOUT_KEEP_ALIVE, else 5
// seconds; -1 when the value given is not a positive number.
double HttpKeepAliveTimeoutSeconds();

}  // namespace llmserve::frontend
