#pragma once
// Registers GET /metrics (the Prometheus text scrape of one frontend's
// FrontendMetrics, or of all API servers of a deployment through a
// MergedScrape) on a Router. Not under /v1, so --api-key does not guard it,
// as in vLLM.

#include <functional>
#include <string>

#include "frontend/http/router.h"
#include "frontend/metrics/frontend_metrics.h"

namespace llmserve::frontend::metrics {

// Adds GET /metrics answering what `scrape` returns (text format 0.0.4).
void RegisterMetricsRoute(std::function<std::string()> scrape, http::Router* router);

// Adds GET /metrics rendering `metrics`, which must outlive the router.
void RegisterMetricsRoute(const FrontendMetrics* metrics, http::Router* router);

}  // namespace llmserve::frontend::metrics
