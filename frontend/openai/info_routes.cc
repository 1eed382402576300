#include "frontend/openai/info_routes.h"

#include "frontend/openai/api_error.h"
#include "frontend/openai/responses.h"
#include "frontend/openai/server_info.h"

namespace llmserve::frontend::openai {

void RegisterInfoRoutes(const InfoRoutesConfig& config, http::Router* router) {
  router->set_error_responder(RouterErrorResponse);
  router->AddFilter("/v1", ApiKeyFilter(config.api_key));
  http::Handler health = [healthy = config.healthy](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    bool ok = !healthy || healthy();
    w->Respond(http::HttpResponse::Make(ok ? 200 : 503, "", ""));
  };
  router->Add("GET", "/health", health);
  router->Add("GET", "/ping", health);  // SageMaker's health check, as vLLM
  router->Add("POST", "/ping", health);
  const std::string version = Dump(VersionBody(config.version));
  router->Add("GET", "/version", [version](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    w->Respond(http::HttpResponse::Make(200, "application/json", version));
  });
  const std::string models =
      Dump(ModelList(config.served_model_names, config.model_root, config.max_model_len, config.created));
  router->Add("GET", "/v1/models", [models](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    w->Respond(http::HttpResponse::Make(200, "application/json", models));
  });
}

}  // namespace llmserve::frontend::openai
