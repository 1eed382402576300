#pragma once
// Small OpenAI/vLLM endpoint helpers: the API-key filter for /v1, the model
// check (404), request ids (X-Request-Id), and the GET /v1/models and
// GET /version bodies. GET /health answers with an empty body (200 or 503), as vLLM.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/http/router.h"
#include "frontend/openai/json_fields.h"

namespace llmserve::frontend::openai {

// A Router filter that answers 401 unless the request carries
// "Authorization: Bearer <api_key>" (compared in constant time). An empty key allows all.
http::Filter ApiKeyFilter(std::string api_key);

// 404 unless `model` is unset or one of `served_names`.
MaybeError CheckModel(const std::optional<std::string>& model, const std::vector<std::string>& served_names);

// The request id: `prefix` + the X-Request-Id header, else the body's request_id,
// else 32 random hex digits.
std::string ResolveRequestId(const http::HttpRequest& request, const std::optional<std::string>& body_id,
                             std::string_view prefix);

// The GET /v1/models body: {"object": "list", "data": [{id, object, created, owned_by, root, parent, max_model_len}]}.
nlohmann::json ModelList(const std::vector<std::string>& served_names, const std::string& root,
                         int32_t max_model_len, int64_t created);

// The GET /version body: {"version": version}.
nlohmann::json VersionBody(const std::string& version);

}  // namespace llmserve::frontend::openai
