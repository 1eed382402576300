#include "frontend/openai/info_routes.h"

#include "frontend/openai/api_error.h"
#include "frontend/openai/responses.h"
#include "frontend/openai/server_info.h"

namespace llmserve::frontend::openai {

void RegisterInfoRoutes(const InfoRoutesConfig& config, http::Router* router) {
  router->set_error_responder(RouterErrorResponse);
  router->AddFilter("/v1", ApiKeyFilter(config.api_key));
  // As vLLM: 200 or 503 with an empty body; a degraded deployment says so.
  http::Handler health = [healthy = config.healthy, dead_ranks = config.dead_ranks](
                             http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    if (healthy && !healthy()) return w->Respond(http::HttpResponse::Make(503, "", ""));
    const std::vector<uint32_t> dead = dead_ranks ? dead_ranks() : std::vector<uint32_t>();
    if (dead.empty()) return w->Respond(http::HttpResponse::Make(200, "", ""));
    w->Respond(http::HttpResponse::Make(
        200, "application/json", Dump(nlohmann::json{{"status", "degraded"}, {"dead_data_parallel_ranks", dead}})));
  };
  router->Add("GET", "/health", health);
  router->Add("GET", "/ping", health);  // SageMaker's health check, as vLLM
  router->Add("POST", "/ping", health);
  const std::string version = Dump(VersionBody(config.version));
  router->Add("GET", "/version", [version](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    w->Respond(http::HttpResponse::Make(200, "application/json", version));
  });
  router->Add("GET", "/v1/models", [config](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    nlohmann::json list = ModelList(config.served_model_names, config.model_root, config.max_model_len(), config.created);
    for (const auto& card : config.lora_cards()) list["data"].push_back(LoraModelCard(card, config.created));
    const std::string models = Dump(list);
    w->Respond(http::HttpResponse::Make(200, "application/json", models));
  });
}

}  // namespace llmserve::frontend::openai
