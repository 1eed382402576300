#include "engine_core/kv_cache_manager.h"

#include <algorithm>

#include <glog/logging.h>

namespace llmserve::engine_core {

namespace {
const KVCacheConfig& Checked(const KVCacheConfig& c) {
  CHECK_GE(c.num_blocks, 2) << "KV cache needs at least 2 blocks (null + 1)";
  CHECK_GT(c.block_size, 0);
  CHECK_GT(c.max_model_len, 0);
  return c;
}
}  // namespace

KVCacheManager::KVCacheManager(const KVCacheConfig& config)
    : config_(Checked(config)), pool_(config.num_blocks, config.enable_prefix_caching) {
  if (config_.enable_prefix_caching) hasher_ = std::make_unique<BlockHasher>(config_.hash_algo);
  if (config_.enable_kv_cache_events) pool_.EnableKVEvents(config_.hash_algo);
}

int32_t KVCacheManager::GetComputedBlocks(const Request& request, std::vector<int32_t>* blocks) {
  // A request that wants prompt logprobs computes every position (vLLM's
  // skip_reading_prefix_cache); its blocks still enter the cache.
  if (!config_.enable_prefix_caching || request.sampling_params.prompt_logprobs.has_value()) return 0;
  DCHECK(request.block_ids.empty());
  // The last token is always recomputed: its logits are needed to sample.
  const int32_t max_hit_blocks = (request.num_tokens() - 1) / config_.block_size;
  const int32_t limit =
      std::min<int32_t>(max_hit_blocks, static_cast<int32_t>(request.block_hashes.size()));
  int32_t hit_blocks = 0;
  for (; hit_blocks < limit; ++hit_blocks) {
    const KVCacheBlock* b = pool_.GetCachedBlock(request.block_hashes[hit_blocks]);
    if (b == nullptr) break;
    blocks->push_back(b->block_id);
  }
  const int32_t hit_tokens = hit_blocks * config_.block_size;
  ++stats_.requests;
  stats_.queries += request.num_tokens();
  stats_.hits += hit_tokens;
  return hit_tokens;
}

bool KVCacheManager::AllocateSlots(Request& request, int32_t num_new_tokens,
                                   int32_t num_new_computed_tokens,
                                   std::span<const int32_t> new_computed_blocks,
                                   int32_t num_lookahead_tokens, bool full_sequence_must_fit,
                                   bool delay_cache_blocks) {
  CHECK_GE(num_new_tokens, 0);
  const int32_t num_computed = request.num_computed_tokens + num_new_computed_tokens;
  const int32_t num_needed =
      std::min(num_computed + num_new_tokens + num_lookahead_tokens, config_.max_model_len);
  const int32_t held =
      static_cast<int32_t>(request.block_ids.size() + new_computed_blocks.size());
  const int32_t num_new_blocks = std::max(0, BlocksFor(num_needed) - held);

  // Hit blocks nobody holds sit on the free list; taking them costs free blocks too.
  int32_t num_evictable_hits = 0;
  for (int32_t id : new_computed_blocks) num_evictable_hits += pool_.block(id).ref_cnt == 0;

  const int32_t free = pool_.num_free_blocks();
  if (num_new_blocks + num_evictable_hits > free) return false;
  if (full_sequence_must_fit) {
    const int32_t full = std::min(request.num_tokens() + num_lookahead_tokens, config_.max_model_len);
    if (std::max(0, BlocksFor(full) - held) + num_evictable_hits > free) return false;
  }

  // Commit: hits first (out of the free list before anything is popped), then new blocks.
  if (!new_computed_blocks.empty()) {
    DCHECK(request.block_ids.empty());
    pool_.Touch(new_computed_blocks);
    request.block_ids.insert(request.block_ids.end(), new_computed_blocks.begin(),
                             new_computed_blocks.end());
    request.num_cached_blocks = static_cast<int32_t>(request.block_ids.size());
  }
  pool_.GetNewBlocks(num_new_blocks, &request.block_ids);
  // Blocks whose every token is computed or scheduled now can be shared; a
  // partially filled block never is.
  if (!delay_cache_blocks) CacheBlocks(request, num_computed + num_new_tokens);
  return true;
}

void KVCacheManager::CacheBlocks(Request& request, int32_t num_computed_tokens) {
  if (!config_.enable_prefix_caching) return;
  const int32_t tokens_to_cache = std::min(num_computed_tokens, request.num_tokens());
  const int32_t full_blocks = std::min<int32_t>({tokens_to_cache / config_.block_size,
                                                 static_cast<int32_t>(request.block_hashes.size()),
                                                 static_cast<int32_t>(request.block_ids.size())});
  const int32_t first = request.num_cached_blocks;
  if (full_blocks <= first) return;
  const int32_t bs = config_.block_size;
  pool_.CacheFullBlocks(std::span<const int32_t>(request.block_ids).subspan(first, full_blocks - first),
                        std::span<const BlockHash>(request.block_hashes).subspan(first, full_blocks - first),
                        first > 0 ? &request.block_hashes[first - 1] : nullptr,
                        request.all_token_ids().subspan(first * bs, (full_blocks - first) * bs), bs,
                        request.lora_name);
  request.num_cached_blocks = full_blocks;
}

void KVCacheManager::Free(Request& request) {
  for (auto it = request.block_ids.rbegin(); it != request.block_ids.rend(); ++it) {
    pool_.FreeBlock(*it);
  }
  request.block_ids.clear();
  request.num_cached_blocks = 0;
}

}  // namespace llmserve::engine_core
