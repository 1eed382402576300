#include "frontend/metrics/metrics_route.h"

#include "frontend/metrics/text_format.h"

namespace llmserve::frontend::metrics {

void RegisterMetricsRoute(std::function<std::string()> scrape, http::Router* router) {
  router->Add("GET", "/metrics",
              [scrape = std::move(scrape)](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
                w->Respond(http::HttpResponse::Make(200, kTextContentType, scrape()));
              });
}

void RegisterMetricsRoute(const FrontendMetrics* metrics, http::Router* router) {
  RegisterMetricsRoute([metrics] { return metrics->Render(); }, router);
}

}  // namespace llmserve::frontend::metrics
