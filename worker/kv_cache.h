#pragma once
// The paged KV cache of one worker: for every layer, K and V pools of
// num_blocks blocks laid out [block][kv_head][slot][head_dim], in fp32
// (default: matches an fp32 reference) or bf16 (half the memory and half the
// bytes a decode step reads).
//
// Default block size on CPU: 32 tokens (kDefaultCpuBlockSize). One KV head's
// block is then 32 × head_dim contiguous elements (16 KiB in fp32 at
// head_dim 128): long enough to stream at full bandwidth in attention, small
// enough that prefix caching still shares most of a prompt.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/thread_pool.h"

namespace llmserve::worker {

inline constexpr size_t kDefaultCpuBlockSize = 32;

struct KvCacheShape {
  size_t num_layers = 0;
  size_t num_blocks = 0;
  size_t block_size = kDefaultCpuBlockSize;
  size_t num_kv_heads = 0;  // this shard's KV heads
  size_t head_dim = 0;
  kernels::cpu::KvDType dtype = kernels::cpu::KvDType::kF32;
  // MLA (mla_attention.h): one pool per layer of head_dim-wide latent rows
  // (num_kv_heads 1), no V pool.
  bool latent = false;
  // Pools per layer: K and V, or the latent one.
  size_t pools() const { return latent ? 1 : 2; }
  // Bytes one block takes across all layers and pools.
  size_t bytes_per_block() const {
    return pools() * num_layers * block_size * num_kv_heads * head_dim * kernels::cpu::KvElementSize(dtype);
  }
};

class KvCache {
 public:
  // Allocates the pools, 64-byte aligned and (when large) on 2 MiB pages
  // where the kernel allows them: a first write then faults in a 2 MiB page
  // rather than 4 KiB, and scattered blocks cost fewer TLB misses. Untouched
  // pages are not committed until written. Throws std::bad_alloc.
  explicit KvCache(const KvCacheShape& shape);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  const KvCacheShape& shape() const { return shape_; }
  // Writes zeros over the pools, so their memory is committed now: a host
  // without that memory fails at startup instead of in the middle of a
  // request, and requests never wait for the kernel to fault in (and zero)
  // a page on their first write (figures:
  // docs/perf/2026-11-25-zen5-attention-read-ahead.md).
  void Commit(kernels::cpu::ThreadPool& pool);
  // The layer's K pool (MLA: its latent pool).
  void* keys(size_t layer) { return data_.get() + shape_.pools() * layer * layer_bytes_; }
  // The layer's V pool (MLA: its latent pool too).
  void* values(size_t layer) { return data_.get() + (shape_.pools() * layer + shape_.pools() - 1) * layer_bytes_; }
  // Total bytes held.
  size_t bytes() const { return shape_.pools() * shape_.num_layers * layer_bytes_; }

 private:
  KvCacheShape shape_;
  size_t layer_bytes_ = 0;
  struct Free {
    void operator()(uint8_t* p) const noexcept { kernels::cpu::AlignedFree(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
};

}  // namespace llmserve::worker
