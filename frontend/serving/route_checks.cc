#include "frontend/serving/route_checks.h"

#include "frontend/openai/server_info.h"

namespace llmserve::frontend::serving {

std::optional<std::string> AdapterOf(const ServingContext& ctx, const std::string& model) {
  if (!openai::CheckModel(model, ctx.served_model_names).has_value()) return std::nullopt;
  if (ctx.loras != nullptr && ctx.loras->Serves(model)) return model;
  return std::nullopt;
}

openai::MaybeError CheckServedModel(const ServingContext& ctx, const std::optional<std::string>& model) {
  if (model && AdapterOf(ctx, *model)) return std::nullopt;
  return openai::CheckModel(model, ctx.served_model_names);
}

void Reply(http::ResponseWriter& w, const openai::ApiError& e) { w.Respond(openai::ErrorResponse(e)); }

openai::MaybeError CheckEngines(const ServingContext& ctx) {
  if (ctx.engine->IsDead()) return openai::MakeError(503, "The engine is dead; the server cannot serve requests.");
  if (!ctx.engine->IsReady()) return openai::MakeError(503, "The engines are still starting; try again shortly.");
  return std::nullopt;
}

openai::MaybeError CheckTokenIds(const ServingContext& ctx, const std::vector<int32_t>& ids) {
  for (int32_t id : ids)
    if (id < 0 || id >= ctx.tokenizer->vocab_size())
      return openai::BadRequest("Token id " + std::to_string(id) + " is out of vocabulary", "prompt");
  return std::nullopt;
}

openai::MaybeError RenderChat(const ServingContext& ctx, const nlohmann::json& messages, bool add_generation_prompt,
                              const nlohmann::json& tools, const nlohmann::json& kwargs,
                              const std::optional<std::string>& custom_template, std::string* prompt) {
  std::optional<ChatTemplate> custom;
  const ChatTemplate* tmpl = ctx.chat_template;
  if (custom_template) {
    auto parsed = ChatTemplate::FromSource(*custom_template,
                                           ctx.chat_template ? ctx.chat_template->special_tokens()
                                                             : std::vector<std::pair<std::string, std::string>>{});
    if (!parsed.ok()) return openai::BadRequest("chat_template: " + parsed.status().message(), "chat_template");
    custom = std::move(parsed).value();
    tmpl = &*custom;
  }
  if (!tmpl)
    return openai::BadRequest("The model has no chat template; use /v1/completions or pass chat_template.");
  auto rendered = tmpl->Render(messages, add_generation_prompt, tools, kwargs);
  if (!rendered.ok()) return openai::BadRequest(rendered.status().message(), "messages");
  *prompt = std::move(rendered).value();
  return std::nullopt;
}

openai::MaybeError CheckRunnerServes(const ServingContext& ctx, bool pooling_api, const char* api) {
  if (ctx.pooling.enabled == pooling_api) return std::nullopt;
  return openai::BadRequest(std::string("The model does not support ") + api + " API");
}

}  // namespace llmserve::frontend::serving
