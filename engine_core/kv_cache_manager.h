#pragma once
// The KV cache manager: gives requests KV blocks for the tokens the scheduler
// wants to compute, finds cached prefixes, and frees blocks when requests
// finish or are preempted. One KV-cache group (full attention) per model.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine_core/block_hash.h"
#include "engine_core/block_pool.h"
#include "engine_core/request.h"

namespace llmserve::engine_core {

// How the KV cache is laid out and used.
struct KVCacheConfig {
  int32_t num_blocks = 0;             // blocks in the workers' KV tensors, null block included
  int32_t profile_block_cap = 0;      // > 0: when num_blocks is profiled, keep at most this many
  int32_t block_size = 16;            // tokens per block
  int32_t max_model_len = 0;          // no request holds KV for more tokens than this
  bool enable_prefix_caching = true;  // reuse blocks of identical prefixes
  HashAlgo hash_algo = HashAlgo::kSha256;  // block hash function
  bool enable_kv_cache_events = false;  // queue KV events (needs prefix caching to have any)
};

// Prefix-cache counters, in tokens like vLLM's prefix_cache_queries/hits.
struct PrefixCacheStats {
  int64_t requests = 0;  // lookups (one per request admission)
  int64_t queries = 0;   // tokens of those requests
  int64_t hits = 0;      // tokens found in the cache
};

class KVCacheManager final {
 public:
  // Checks the config (positive sizes) and builds the block pool.
  explicit KVCacheManager(const KVCacheConfig& config);
  KVCacheManager(const KVCacheManager&) = delete;
  KVCacheManager& operator=(const KVCacheManager&) = delete;

  // For a request holding no blocks: the longest run of cached blocks matching
  // its block hashes, capped so at least the last token is recomputed
  // (num_tokens - 1). Appends the block ids to `*blocks` and returns the hit
  // length in tokens. Counts a query; changes nothing else. A request asking
  // for prompt_logprobs gets no hit and counts no query (vLLM).
  int32_t GetComputedBlocks(const Request& request, std::vector<int32_t>* blocks);

  // Makes room for `num_new_tokens` more tokens after the request's computed
  // ones plus `num_new_computed_tokens` prefix-cache hits (whose blocks are
  // `new_computed_blocks`, from GetComputedBlocks), with `num_lookahead_tokens`
  // extra slots (speculative tokens). With `full_sequence_must_fit`, also
  // requires room for the whole current sequence (admission gate). Returns
  // false and changes nothing when the free blocks do not suffice. On success
  // the request's block_ids grow (hits first, then new blocks) and its newly
  // full blocks enter the prefix cache, unless `delay_cache_blocks` (their KV
  // is still being loaded by a KV connector: CacheBlocks enters them later).
  bool AllocateSlots(Request& request, int32_t num_new_tokens, int32_t num_new_computed_tokens = 0,
                     std::span<const int32_t> new_computed_blocks = {},
                     int32_t num_lookahead_tokens = 0, bool full_sequence_must_fit = false,
                     bool delay_cache_blocks = false);

  // Enters the request's full blocks among its first `num_computed_tokens`
  // tokens in the prefix cache (those not entered yet; no-op without prefix caching).
  void CacheBlocks(Request& request, int32_t num_computed_tokens);

  // Releases the request's blocks, last block first, so that the tails of
  // prefix chains are evicted before their heads.
  void Free(Request& request);

  // Drops all cached hashes; only possible when no block is held (returns false otherwise).
  bool ResetPrefixCache() { return pool_.ResetPrefixCache(); }

  // The KV events queued since the last call (empty when events are off).
  std::vector<proto::KVCacheEvent> TakeKVEvents() { return pool_.TakeKVEvents(); }

  // Fraction of usable blocks held by requests.
  double usage() const { return pool_.usage(); }
  // Free blocks (cached-but-unreferenced ones included).
  int32_t num_free_blocks() const { return pool_.num_free_blocks(); }
  // Cumulative prefix-cache counters.
  const PrefixCacheStats& prefix_cache_stats() const { return stats_; }
  // The hasher matching the config, or nullptr when prefix caching is off.
  const BlockHasher* hasher() const { return hasher_.get(); }
  // The configuration in use.
  const KVCacheConfig& config() const { return config_; }
  // The block pool (tests and metrics).
  const BlockPool& pool() const { return pool_; }

 private:
  int32_t BlocksFor(int32_t num_tokens) const {
    return (num_tokens + config_.block_size - 1) / config_.block_size;
  }

  KVCacheConfig config_;
  BlockPool pool_;
  std::unique_ptr<BlockHasher> hasher_;
  PrefixCacheStats stats_;
};

}  // namespace llmserve::engine_core
