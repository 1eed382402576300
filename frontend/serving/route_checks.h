#pragma once
// What the model-serving handlers check and render before they start a job:
// the model a request names, the engines' state, client-given token ids, the
// chat prompt, and whether the runner serves the endpoint at all.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/http/response_writer.h"
#include "frontend/openai/api_error.h"
#include "frontend/serving/serving_context.h"

namespace llmserve::frontend::serving {

// The LoRA adapter `model` names, if it names one (the served model's name never does).
std::optional<std::string> AdapterOf(const ServingContext& ctx, const std::string& model);

// 404 unless `model` is unset, the served model or one of its LoRA adapters.
openai::MaybeError CheckServedModel(const ServingContext& ctx, const std::optional<std::string>& model);

// Answers `w` with the error.
void Reply(http::ResponseWriter& w, const openai::ApiError& e);

// 503 while the engines start or when none is alive.
openai::MaybeError CheckEngines(const ServingContext& ctx);

// Token ids as the client gave them must exist in the vocabulary.
openai::MaybeError CheckTokenIds(const ServingContext& ctx, const std::vector<int32_t>& ids);

// Renders a chat prompt with the model's template (or the request's own).
openai::MaybeError RenderChat(const ServingContext& ctx, const nlohmann::json& messages, bool add_generation_prompt,
                              const nlohmann::json& tools, const nlohmann::json& kwargs,
                              const std::optional<std::string>& custom_template, std::string* prompt);

// vLLM's answer when the runner does not serve `api` ("Completions",
// "Embeddings", ...): 400 "The model does not support <api> API".
openai::MaybeError CheckRunnerServes(const ServingContext& ctx, bool pooling_api, const char* api);

}  // namespace llmserve::frontend::serving
