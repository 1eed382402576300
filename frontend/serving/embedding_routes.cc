#include "frontend/serving/embedding_routes.h"

#include <algorithm>

#include "frontend/openai/embedding_request.h"
#include "frontend/openai/server_info.h"
#include "frontend/serving/embedding_job.h"
#include "frontend/serving/ignored_fields_log.h"
#include "frontend/serving/route_checks.h"

namespace llmserve::frontend::serving {

namespace {

// vLLM's checks of `dimensions` against the model's matryoshka support.
openai::MaybeError CheckDimensions(const ServingContext& ctx, const std::string& model,
                                   std::optional<int32_t> dimensions) {
  if (!dimensions) return std::nullopt;
  const auto& allowed = ctx.pooling.matryoshka_dimensions;
  if (!ctx.pooling.matryoshka && allowed.empty())
    return openai::BadRequest("Model \"" + model + "\" does not support matryoshka representation, changing output "
                              "dimensions will lead to poor results.", "dimensions");
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *dimensions) == allowed.end())
    return openai::BadRequest("Model \"" + model + "\" only supports the dimensions listed in its config's "
                              "matryoshka_dimensions, not " + std::to_string(*dimensions) + ".", "dimensions");
  return std::nullopt;
}

// The prompt to embed: truncated to its last `truncate` tokens when asked
// (-1: the context length), and within the context.
openai::MaybeError FitPrompt(const ServingContext& ctx, std::optional<int32_t> truncate, std::vector<int32_t>* ids) {
  const int32_t max_len = ctx.engine->max_model_len();
  if (truncate) {
    const size_t keep = static_cast<size_t>(*truncate < 0 ? max_len : *truncate);
    if (*truncate > max_len)
      return openai::BadRequest("truncate_prompt_tokens (" + std::to_string(*truncate) +
                                ") cannot be greater than max_model_len (" + std::to_string(max_len) + ").",
                                "truncate_prompt_tokens");
    if (ids->size() > keep) ids->erase(ids->begin(), ids->end() - static_cast<std::ptrdiff_t>(keep));
  }
  if (ids->empty()) return openai::BadRequest("The input is empty.", "input");
  if (ids->size() >= static_cast<size_t>(max_len))
    return openai::BadRequest("This model's maximum context length is " + std::to_string(max_len) +
                              " tokens (an embedded input may hold " + std::to_string(max_len - 1) +
                              "). However, you requested " + std::to_string(ids->size()) +
                              " tokens in the input for embedding generation. Please reduce the length of the input.",
                              "input");
  return std::nullopt;
}

void HandleEmbeddings(const ServingContext& ctx, const http::HttpRequest& req, std::shared_ptr<http::ResponseWriter> w,
                      bool pooling_endpoint) {
  if (auto e = CheckRunnerServes(ctx, true, pooling_endpoint ? "Pooling" : "Embeddings")) return Reply(*w, *e);
  openai::EmbeddingRequest er;
  if (auto e = openai::ParseEmbeddingRequest(req.body, pooling_endpoint, &er)) return Reply(*w, *e);
  WarnIgnoredFields(er.ignored_fields);
  if (auto e = CheckServedModel(ctx, er.model)) return Reply(*w, *e);
  EmbeddingJobSpec spec;
  spec.model = er.model.value_or(ctx.served_model_names.front());
  if (auto e = CheckDimensions(ctx, spec.model, er.dimensions)) return Reply(*w, *e);
  if (auto e = CheckEngines(ctx)) return Reply(*w, *e);
  spec.pooling_endpoint = pooling_endpoint;
  spec.request_id = openai::ResolveRequestId(req, er.request_id, pooling_endpoint ? "pool-" : "embd-");
  spec.lora_name = AdapterOf(ctx, spec.model);
  spec.encoding = er.encoding;
  spec.dimensions = er.dimensions;
  spec.normalize = er.normalize.value_or(ctx.pooling.normalize);
  spec.priority = er.priority;
  if (const std::string* rank = req.header("X-data-parallel-rank")) {
    try {
      spec.data_parallel_rank = std::stoi(*rank);
    } catch (const std::exception&) {
      return Reply(*w, openai::BadRequest("X-data-parallel-rank must be an integer"));
    }
  }
  if (er.messages.is_array()) {
    std::string text;
    if (auto e = RenderChat(ctx, er.messages, er.add_generation_prompt, nullptr, er.chat_template_kwargs,
                            er.chat_template, &text))
      return Reply(*w, *e);
    spec.prompts.push_back(ctx.tokenizer->Encode(text, er.add_special_tokens));
  }
  for (const openai::PromptInput& p : er.inputs) {
    if (!p.text)
      if (auto e = CheckTokenIds(ctx, p.token_ids)) return Reply(*w, *e);
    spec.prompts.push_back(p.text ? ctx.tokenizer->Encode(*p.text, er.add_special_tokens) : p.token_ids);
  }
  for (auto& ids : spec.prompts)
    if (auto e = FitPrompt(ctx, er.truncate_prompt_tokens, &ids)) return Reply(*w, *e);
  auto job = std::make_shared<EmbeddingJob>(ctx, std::move(spec), std::move(w));
  job->Start();
}

}  // namespace

void RegisterEmbeddingRoutes(const ServingContext& context, http::Router* router) {
  const ServingContext* ctx = &context;
  router->Add("POST", "/v1/embeddings", [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) {
    HandleEmbeddings(*ctx, r, std::move(w), false);
  });
  router->Add("POST", "/pooling", [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) {
    HandleEmbeddings(*ctx, r, std::move(w), true);
  });
}

}  // namespace llmserve::frontend::serving
