#pragma once
// Registers GET /metrics (the Prometheus text scrape of one frontend's
// FrontendMetrics) on a Router. Not under /v1, so --api-key does not guard it,
// as in vLLM.

#include "frontend/http/router.h"
#include "frontend/metrics/frontend_metrics.h"

namespace llmserve::frontend::metrics {

// Adds GET /metrics rendering `metrics`, which must outlive the router.
void RegisterMetricsRoute(const FrontendMetrics* metrics, http::Router* router);

}  // namespace llmserve::frontend::metrics
