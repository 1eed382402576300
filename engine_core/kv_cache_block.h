#pragma once
// One KV-cache block's metadata. The KV tensors live in the workers; the engine
// core only tracks ids, reference counts, free-list links and prefix hashes.

#include <cstdint>

#include "engine_core/block_hash.h"

namespace llmserve::engine_core {

struct KVCacheBlock {
  int32_t block_id = 0;              // index into the workers' KV tensors
  int32_t ref_cnt = 0;               // requests holding this block
  KVCacheBlock* prev_free = nullptr; // free-list links (both null: not in the list)
  KVCacheBlock* next_free = nullptr;
  bool has_hash = false;             // entered in the prefix cache under `hash`
  BlockHash hash;                    // valid when has_hash; kept after free (lazy eviction)
};

}  // namespace llmserve::engine_core
