// vllm:cache_config_info: the label names and values vLLM's CacheConfig
// gives (str() of each field, engine last), one series per announced engine
// with num_gpu_blocks the total over engines as vLLM's API server computes
// it, and series replaced (never duplicated) when an engine announces again.
#include <gtest/gtest.h>

#include "frontend/metrics/frontend_metrics.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

using testing::ParsePrometheusText;
using testing::PromSample;
using testing::PromScrape;

// The samples of vllm:cache_config_info in a scrape of `m`.
std::vector<PromSample> InfoSamples(const FrontendMetrics& m) {
  PromScrape s = ParsePrometheusText(m.Render());
  EXPECT_EQ(s.error, "");
  if (!s.families.count("vllm:cache_config_info")) return {};
  EXPECT_EQ(s.families.at("vllm:cache_config_info").type, "gauge");
  return s.families.at("vllm:cache_config_info").samples;
}

proto::CacheConfig Cache(uint32_t block_size) {
  proto::CacheConfig c;
  c.set_block_size(block_size);
  c.set_enable_prefix_caching(true);
  return c;
}

TEST(CacheConfigInfo, LabelsAreVllmsCacheConfigFields) {
  proto::CacheConfig c = Cache(16);
  c.set_memory_utilization(0.5);
  c.set_kv_cache_dtype("fp8");
  c.set_prefix_caching_hash_algo("xxhash");
  c.set_kv_cache_memory_bytes(1 << 20);
  const std::vector<std::string> names = CacheConfigInfoLabelNames();
  const std::vector<std::string> values = CacheConfigInfoLabelValues(c, 300, 2);
  ASSERT_EQ(names.size(), values.size());
  std::map<std::string, std::string> labels;
  for (size_t i = 0; i < names.size(); ++i) labels[names[i]] = values[i];
  const std::map<std::string, std::string> expected = {
      {"block_size", "16"}, {"gpu_memory_utilization", "0.5"}, {"swap_space", "4"}, {"cache_dtype", "fp8"},
      {"is_attention_free", "False"}, {"num_gpu_blocks_override", "None"}, {"sliding_window", "None"},
      {"enable_prefix_caching", "True"}, {"prefix_caching_hash_algo", "xxhash"}, {"cpu_offload_gb", "0"},
      {"calculate_kv_scales", "False"}, {"cpu_kvcache_space_bytes", "None"}, {"mamba_page_size_padded", "None"},
      {"mamba_block_size", "None"}, {"mamba_cache_dtype", "auto"}, {"mamba_ssm_cache_dtype", "auto"},
      {"num_gpu_blocks", "300"}, {"num_cpu_blocks", "None"}, {"kv_sharing_fast_prefill", "False"},
      {"kv_cache_memory_bytes", "1048576"}, {"engine", "2"}};
  EXPECT_EQ(labels, expected);
  EXPECT_EQ(names.back(), "engine");
  // Unset fields read as vLLM's defaults.
  const std::vector<std::string> defaults = CacheConfigInfoLabelValues(proto::CacheConfig(), 0, 0);
  EXPECT_EQ(defaults[1], "0.9");
  EXPECT_EQ(defaults[3], "auto");
  EXPECT_EQ(defaults[7], "False");
  EXPECT_EQ(defaults[8], "sha256");
}

TEST(CacheConfigInfo, OneSeriesPerAnnouncedEngineWithTheTotalBlocks) {
  FrontendMetrics m({"tiny", {0, 1}});
  EXPECT_TRUE(InfoSamples(m).empty()) << "no engine has announced itself";
  m.RecordEngineReady(0, Cache(16), 100);
  std::vector<PromSample> s = InfoSamples(m);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].value, 1.0);
  EXPECT_EQ(s[0].labels.at("engine"), "0");
  EXPECT_EQ(s[0].labels.at("num_gpu_blocks"), "100");
  EXPECT_EQ(s[0].labels.count("model_name"), 0u) << "vLLM's info gauge has no model_name";

  m.RecordEngineReady(1, Cache(16), 50);
  s = InfoSamples(m);
  ASSERT_EQ(s.size(), 2u);
  for (const PromSample& p : s) EXPECT_EQ(p.labels.at("num_gpu_blocks"), "150") << p.labels.at("engine");

  // Rank 1 restarts with a smaller cache: its old series goes, rank 0's follows the new total.
  m.RecordEngineReady(1, Cache(16), 40);
  s = InfoSamples(m);
  ASSERT_EQ(s.size(), 2u);
  for (const PromSample& p : s) EXPECT_EQ(p.labels.at("num_gpu_blocks"), "140") << p.labels.at("engine");
}

}  // namespace
}  // namespace llmserve::frontend::metrics
