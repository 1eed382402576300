#include "worker/kv_cache_sizing.h"

#include <algorithm>

namespace llmserve::worker {

double WorkerMemoryFraction(const proto::CacheConfig& cache, const std::string& device, uint32_t tp_size,
                            uint32_t dp_local) {
  const double per_engine = std::max(1u, tp_size);
  if (device == "cuda") {
    double fraction = cache.kv_cache_memory_fraction();
    if (fraction <= 0) fraction = cache.memory_utilization();
    if (fraction <= 0) fraction = kDefaultMemoryFraction;
    // Tensor-parallel ranks each have a GPU of their own; the node's
    // data-parallel ranks share device 0.
    return fraction / std::max(1u, dp_local);
  }
  const double fraction = cache.kv_cache_memory_fraction() > 0 ? cache.kv_cache_memory_fraction()
                                                               : kDefaultMemoryFraction;
  return fraction / per_engine;
}

bool KvCacheSizeIsDefault(const proto::CacheConfig& cache) {
  return cache.kv_cache_memory_bytes() == 0 && cache.kv_cache_memory_fraction() <= 0;
}

size_t SchedulerUsableBlocks(size_t max_num_seqs, size_t max_model_len, size_t block_size) {
  const size_t per_request = (max_model_len + block_size - 1) / block_size;
  return max_num_seqs * per_request + 1;
}

}  // namespace llmserve::worker
