#include "worker/kv_cache.h"

namespace llmserve::worker {

KvCache::KvCache(const KvCacheShape& shape)
    : shape_(shape),
      layer_elems_(shape.num_blocks * shape.num_kv_heads * shape.block_size * shape.head_dim),
      data_(new float[2 * shape.num_layers * layer_elems_ + 1]) {}

}  // namespace llmserve::worker
