// GET /metrics over a real HTTP server: the text content type, a strict parse
// of the body, and no API key needed even when /v1 requires one (as vLLM).
#include <gtest/gtest.h>

#include "frontend/http/http_server.h"
#include "frontend/metrics/metrics_route.h"
#include "frontend/openai/info_routes.h"
#include "tests/frontend/http_test_client.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

TEST(MetricsRoute, ServesTheScrapeWithoutTheApiKey) {
  FrontendMetrics m({"tiny", {0}});
  proto::SchedulerStats stats;
  stats.num_running_reqs = 2;
  m.RecordSchedulerStats(0, stats);
  http::Router router;
  openai::InfoRoutesConfig info;
  info.served_model_names = {"tiny"};
  info.api_key = "sekrit";
  openai::RegisterInfoRoutes(info, &router);
  RegisterMetricsRoute(&m, &router);
  auto server = http::HttpServer::Start(http::HttpServerConfig{}, std::move(router));
  ASSERT_TRUE(server.ok()) << server.status().ToString();

  testing::TestClient client;
  ASSERT_TRUE(client.Connect((*server)->port()));
  ASSERT_TRUE(client.SendRequest("GET", "/metrics", "", ""));
  testing::ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  testing::PromScrape s = testing::ParsePrometheusText(r.body);
  ASSERT_EQ(s.error, "");
  EXPECT_EQ(s.Value("vllm:num_requests_running", {{"engine", "0"}, {"model_name", "tiny"}}), 2.0);

  testing::TestClient guarded;  // /v1 still needs the key
  ASSERT_TRUE(guarded.Connect((*server)->port()));
  ASSERT_TRUE(guarded.SendRequest("GET", "/v1/models", "", ""));
  EXPECT_EQ(guarded.ReadResponse().status, 401);

  testing::TestClient post;
  ASSERT_TRUE(post.Connect((*server)->port()));
  ASSERT_TRUE(post.SendRequest("POST", "/metrics", "", ""));
  EXPECT_EQ(post.ReadResponse().status, 405);
  (*server)->Stop();
}

}  // namespace
}  // namespace llmserve::frontend::metrics
