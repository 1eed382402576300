#include "frontend/api_flags.h"

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
