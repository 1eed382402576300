#include "worker/kv_cache.h"

namespace llmserve::worker {

KvCache::KvCache(const KvCacheShape& shape)
    : shape_(shape),
      layer_bytes_(shape.num_blocks * shape.num_kv_heads * shape.block_size * shape.head_dim *
                   kernels::cpu::KvElementSize(shape.dtype)),
      data_(static_cast<uint8_t*>(kernels::cpu::AlignedAllocate(2 * shape.num_layers * layer_bytes_ + 64))) {}

}  // namespace llmserve::worker
