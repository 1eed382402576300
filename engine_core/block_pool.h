#pragma once
// The pool of KV-cache blocks: reference counts, the free list (eviction
// order) and the prefix cache (hash → block).
//
// Lazy eviction: a block whose reference count drops to 0 goes to the back of
// the free list but keeps its hash, so a later request with the same prefix can
// take it back (Touch). Only when the block is popped for reuse does its hash
// leave the cache. Block 0 is the null block: never free, never cached.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine_core/block_hash.h"
#include "engine_core/cached_block_index.h"
#include "engine_core/free_block_queue.h"
#include "engine_core/kv_cache_block.h"
#include "proto/kv_events.h"

namespace llmserve::engine_core {

class BlockPool final {
 public:
  // `num_blocks` blocks including the null block (so num_blocks - 1 usable);
  // must be at least 2.
  BlockPool(int32_t num_blocks, bool enable_caching);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // Pops `n` blocks from the free list front (evicting their cached hashes),
  // sets their reference count to 1 and appends their ids to `out`.
  // The caller has checked n <= num_free_blocks().
  void GetNewBlocks(int32_t n, std::vector<int32_t>* out);
  // A cached block with this hash (free or in use), or nullptr.
  KVCacheBlock* GetCachedBlock(const BlockHash& hash) const;
  // Takes a reference on each block (a prefix-cache hit); blocks at 0 leave the free list.
  void Touch(std::span<const int32_t> block_ids);
  // Enters `block_id` (held, not yet cached) in the prefix cache under `hash`.
  void CacheBlock(int32_t block_id, const BlockHash& hash);
  // Caches a request's newly full blocks `block_ids` (held, not yet cached)
  // under `hashes`, in chain order; `parent` is the hash of the block before
  // the first (nullptr: they start the request), `token_ids` their tokens and
  // `lora_name` the request's adapter (empty: none). Queues one BlockStored.
  void CacheFullBlocks(std::span<const int32_t> block_ids, std::span<const BlockHash> hashes,
                       const BlockHash* parent, std::span<const int32_t> token_ids,
                       int32_t block_size, std::string_view lora_name);
  // Drops one reference from the block; at 0 it is appended to the free list
  // (keeping its hash). The null block is ignored.
  void FreeBlock(int32_t block_id);
  // Forgets every cached hash. Fails (returns false) while any block is held.
  bool ResetPrefixCache();

  // Starts queueing KV events; `algo` turns hashes into their external form.
  void EnableKVEvents(HashAlgo algo);
  // Whether events are queued.
  bool kv_events_enabled() const { return events_enabled_; }
  // The events queued since the last call, oldest first.
  std::vector<proto::KVCacheEvent> TakeKVEvents();

  // Blocks on the free list (including cached ones that can be evicted).
  int32_t num_free_blocks() const { return free_.size(); }
  // Usable blocks (all but the null block).
  int32_t num_usable_blocks() const { return static_cast<int32_t>(blocks_.size()) - 1; }
  // Fraction of usable blocks held by requests, in [0, 1].
  double usage() const;
  // Number of blocks currently in the prefix cache.
  int32_t num_cached_blocks() const { return index_.size(); }
  // Read access to one block's metadata.
  const KVCacheBlock& block(int32_t id) const { return blocks_[id]; }
  // Free-list order front to back (tests).
  std::vector<int32_t> FreeListOrder() const { return free_.BlockIds(); }
  // Id of the null block.
  static constexpr int32_t kNullBlockId = 0;

 private:
  void EvictIfCached(KVCacheBlock* block);

  bool enable_caching_;
  std::vector<KVCacheBlock> blocks_;
  FreeBlockQueue free_;
  CachedBlockIndex index_;
  bool events_enabled_ = false;
  HashAlgo event_hash_algo_ = HashAlgo::kSha256;
  std::vector<proto::KVCacheEvent> events_;  // queued since the last TakeKVEvents
};

}  // namespace llmserve::engine_core
