#include "worker/kv_cache.h"

#include <algorithm>
#include <cstring>

namespace llmserve::worker {

KvCache::KvCache(const KvCacheShape& shape)
    : shape_(shape),
      layer_bytes_(shape.num_blocks * shape.num_kv_heads * shape.block_size * shape.head_dim *
                   kernels::cpu::KvElementSize(shape.dtype)),
      data_(static_cast<uint8_t*>(kernels::cpu::AlignedAllocate(shape.pools() * shape.num_layers * layer_bytes_))) {}

void KvCache::Commit(kernels::cpu::ThreadPool& pool) {
  constexpr size_t kChunk = size_t{2} << 20;  // one huge page
  const size_t total = bytes();
  pool.ParallelFor((total + kChunk - 1) / kChunk, 1, [&](size_t begin, size_t end, size_t) {
    const size_t from = begin * kChunk, to = std::min(total, end * kChunk);
    std::memset(data_.get() + from, 0, to - from);
  });
}

}  // namespace llmserve::worker
