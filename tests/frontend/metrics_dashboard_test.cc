// deploy/grafana/llmserve.json: valid JSON, every panel queries something, and
// every vllm:* name in it is a series /metrics exports (a histogram's
// _bucket/_sum/_count included), so the dashboard cannot drift from the code.
// Runs from the repository root (ctest's working directory).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontend/metrics/frontend_metrics.h"

namespace llmserve::frontend::metrics {
namespace {

constexpr char kDashboard[] = "deploy/grafana/llmserve.json";

void CollectStrings(const nlohmann::json& j, const std::string& key, std::vector<std::pair<std::string, std::string>>* out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) CollectStrings(it.value(), it.key(), out);
  } else if (j.is_array()) {
    for (const auto& v : j) CollectStrings(v, key, out);
  } else if (j.is_string()) {
    out->emplace_back(key, j.get<std::string>());
  }
}

TEST(MetricsDashboard, ReferencesOnlyExportedMetrics) {
  std::ifstream in(kDashboard);
  ASSERT_TRUE(in) << "cannot open " << kDashboard << " (run from the repository root)";
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json dash = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(dash.is_discarded()) << kDashboard << " is not valid JSON";
  EXPECT_EQ(dash.value("uid", ""), "llmserve-overview");

  FrontendMetrics m({"tiny", {0}});
  std::set<std::string> exported;
  const std::string scrape = m.Render();
  for (const std::string& name : m.ExposedNames()) {
    exported.insert(name);
    if (scrape.find("# TYPE " + name + " histogram") != std::string::npos)
      for (const char* suffix : {"_bucket", "_sum", "_count"}) exported.insert(name + suffix);
  }

  std::set<int> ids;
  int queried_panels = 0;
  const std::regex metric(R"(vllm:[A-Za-z0-9_:]+)");
  for (const auto& panel : dash.at("panels")) {
    ASSERT_TRUE(panel.contains("id") && panel.contains("gridPos") && panel.contains("title"));
    EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << "duplicate panel id " << panel["id"];
    if (panel.value("type", "") == "row") continue;
    ASSERT_TRUE(panel.contains("targets") && !panel["targets"].empty()) << panel["title"];
    for (const auto& target : panel["targets"]) {
      const std::string expr = target.at("expr").get<std::string>();
      auto begin = std::sregex_iterator(expr.begin(), expr.end(), metric);
      EXPECT_NE(begin, std::sregex_iterator()) << panel["title"] << ": no vllm metric in " << expr;
    }
    ++queried_panels;
  }
  EXPECT_GE(queried_panels, 10);

  std::vector<std::pair<std::string, std::string>> strings;
  CollectStrings(dash, "", &strings);
  std::set<std::string> used;
  for (const auto& [key, value] : strings)
    for (auto it = std::sregex_iterator(value.begin(), value.end(), metric); it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(exported.count(it->str())) << key << ": " << it->str() << " is not exported";
      used.insert(it->str());
    }
  // The issue's panels: throughput, latency percentiles, queue, KV usage, prefix hit rate, per-engine load.
  for (const char* needed : {"vllm:generation_tokens_total", "vllm:time_to_first_token_seconds_bucket",
                             "vllm:e2e_request_latency_seconds_bucket", "vllm:num_requests_waiting",
                             "vllm:kv_cache_usage_perc", "vllm:prefix_cache_hits_total"})
    EXPECT_TRUE(used.count(needed)) << needed;
}

}  // namespace
}  // namespace llmserve::frontend::metrics
