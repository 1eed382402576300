#pragma once
// vllm:cache_config_info: vLLM's info-style gauge (value 1) whose labels are
// its CacheConfig's fields (CacheConfig.metrics_info(), vllm/config/cache.py
// of the v0.11 line: every field, valued as Python's str() spells it) plus
// `engine`, one series per engine. The frontend learns each engine's cache
// configuration and KV block count from its ReadyResponse. As vLLM's API
// server, which adds every engine's num_gpu_blocks together at the handshake,
// num_gpu_blocks is the total over the engines that announced themselves, on
// every series; num_cpu_blocks is "None" there too. Fields that llmserve has
// no counterpart for carry vLLM's defaults. Every API server of a deployment
// hears every engine's ReadyResponse, so a merged scrape shows the scraped
// server's own series (GaugeMerge::kLocal), once.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "frontend/metrics/registry.h"
#include "proto/engine_config.pb.h"

namespace llmserve::frontend::metrics {

// The label names, in vLLM's field order, "engine" last.
const std::vector<std::string>& CacheConfigInfoLabelNames();

// The label values (in CacheConfigInfoLabelNames' order) for engine `engine`
// running with `cache`, in a deployment of `num_gpu_blocks` KV blocks in all.
std::vector<std::string> CacheConfigInfoLabelValues(const proto::CacheConfig& cache, uint64_t num_gpu_blocks,
                                                    uint32_t engine);

class CacheConfigInfo {
 public:
  // Registers the (empty) family in `registry`, which must outlive this.
  explicit CacheConfigInfo(Registry& registry);
  CacheConfigInfo(const CacheConfigInfo&) = delete;
  CacheConfigInfo& operator=(const CacheConfigInfo&) = delete;

  // Engine `engine` announced itself (again, after a restart) with `cache` and
  // `num_kv_blocks` KV blocks: every engine's series is set anew. Thread-safe.
  void EngineReady(uint32_t engine, const proto::CacheConfig& cache, uint64_t num_kv_blocks);

 private:
  Family<Gauge>* family_;
  std::mutex mu_;
  std::map<uint32_t, std::pair<proto::CacheConfig, uint64_t>> engines_;  // rank -> what it announced
  std::vector<std::vector<std::string>> shown_;                          // label values of the series now set
};

}  // namespace llmserve::frontend::metrics
