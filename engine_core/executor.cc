#include "engine_core/executor.h"

#include <glog/logging.h>

namespace llmserve::engine_core {

int64_t CapProfiledBlocks(int64_t profiled, const KVCacheConfig& config) {
  if (config.profile_block_cap <= 0) return profiled;
  if (profiled <= config.profile_block_cap) {
    LOG(INFO) << "KV cache: memory allows " << profiled << " blocks, fewer than the " << config.profile_block_cap
              << " that max_num_seqs requests of max_model_len " << config.max_model_len << " tokens could use";
    return profiled;
  }
  LOG(INFO) << "KV cache: " << config.profile_block_cap << " blocks, what max_num_seqs requests of max_model_len "
            << config.max_model_len << " tokens can use (memory allows " << profiled
            << "; --kv-cache-memory sets the size)";
  return config.profile_block_cap;
}

}  // namespace llmserve::engine_core
