#include "frontend/metrics/metrics_route.h"

#include "frontend/metrics/text_format.h"

namespace llmserve::frontend::metrics {

void RegisterMetricsRoute(const FrontendMetrics* metrics, http::Router* router) {
  router->Add("GET", "/metrics", [metrics](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    w->Respond(http::HttpResponse::Make(200, kTextContentType, metrics->Render()));
  });
}

}  // namespace llmserve::frontend::metrics
