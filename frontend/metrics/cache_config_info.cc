#include "frontend/metrics/cache_config_info.h"

#include <algorithm>

#include "frontend/metrics/text_format.h"

namespace llmserve::frontend::metrics {

namespace {

constexpr double kDefaultGpuMemoryUtilization = 0.9;  // vLLM's, which the launcher leaves unset when not given

std::string PyBool(bool value) { return value ? "True" : "False"; }

// An optional count as Python prints it: "None" for 0 (unset).
std::string PyCount(uint64_t value) { return value == 0 ? "None" : std::to_string(value); }

std::string OrDefault(const std::string& value, const char* fallback) { return value.empty() ? fallback : value; }

}  // namespace

const std::vector<std::string>& CacheConfigInfoLabelNames() {
  static const std::vector<std::string> names = {
      "block_size", "gpu_memory_utilization", "swap_space", "cache_dtype", "is_attention_free",
      "num_gpu_blocks_override", "sliding_window", "enable_prefix_caching", "prefix_caching_hash_algo",
      "cpu_offload_gb", "calculate_kv_scales", "cpu_kvcache_space_bytes", "mamba_page_size_padded",
      "mamba_block_size", "mamba_cache_dtype", "mamba_ssm_cache_dtype", "num_gpu_blocks", "num_cpu_blocks",
      "kv_sharing_fast_prefill", "kv_cache_memory_bytes", "engine"};
  return names;
}

std::vector<std::string> CacheConfigInfoLabelValues(const proto::CacheConfig& cache, uint64_t num_gpu_blocks,
                                                    uint32_t engine) {
  const double utilization = cache.memory_utilization() > 0 ? cache.memory_utilization() : kDefaultGpuMemoryUtilization;
  return {std::to_string(cache.block_size()),
          FormatValue(utilization),  // Python's repr of a float, as str() gives it
          "4",                       // swap_space: accepted with no effect, vLLM's default
          OrDefault(cache.kv_cache_dtype(), "auto"),
          PyBool(false),  // is_attention_free
          PyCount(cache.num_kv_blocks_override()),
          "None",  // sliding_window: no sliding-window attention
          PyBool(cache.enable_prefix_caching()),
          OrDefault(cache.prefix_caching_hash_algo(), "sha256"),
          "0",             // cpu_offload_gb: accepted with no effect
          PyBool(false),   // calculate_kv_scales: accepted with no effect
          "None",          // cpu_kvcache_space_bytes: --kv-cache-memory is kv_cache_memory_bytes
          "None", "None",  // mamba_page_size_padded, mamba_block_size: no Mamba models
          "auto", "auto",  // mamba_cache_dtype, mamba_ssm_cache_dtype
          std::to_string(num_gpu_blocks),
          "None",          // num_cpu_blocks: the API server never learns it
          PyBool(false),   // kv_sharing_fast_prefill
          PyCount(cache.kv_cache_memory_bytes()),
          std::to_string(engine)};
}

CacheConfigInfo::CacheConfigInfo(Registry& registry)
    : family_(&registry.AddGauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig",
                                 CacheConfigInfoLabelNames(), GaugeMerge::kLocal)) {}

void CacheConfigInfo::EngineReady(uint32_t engine, const proto::CacheConfig& cache, uint64_t num_kv_blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  engines_[engine] = {cache, num_kv_blocks};
  uint64_t total = 0;
  for (const auto& [rank, announced] : engines_) total += announced.second;
  std::vector<std::vector<std::string>> shown;
  for (const auto& [rank, announced] : engines_) {
    shown.push_back(CacheConfigInfoLabelValues(announced.first, total, rank));
    family_->Labels(shown.back()).Set(1);
  }
  // Series whose labels changed go only after their replacements exist, so a scrape never misses an engine.
  for (const auto& old : shown_)
    if (std::find(shown.begin(), shown.end(), old) == shown.end()) family_->Remove(old);
  shown_ = std::move(shown);
}

}  // namespace llmserve::frontend::metrics
