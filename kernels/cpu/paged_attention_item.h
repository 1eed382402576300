#pragma once
// Internal to paged_attention*.cc: one unit of attention work — one query
// token's GQA group of heads against one KV head — and its implementations.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/paged_attention.h"

namespace llmserve::kernels::cpu::internal {

struct AttentionItem {
  const float* q = nullptr;   // the group's first query head; heads head_dim apart
  const int32_t* table = nullptr;  // the request's block table
  size_t kv_head = 0;
  size_t first = 0;           // attend to key positions [first, last]
  size_t last = 0;
  float* out = nullptr;       // the group's first output head; heads head_dim apart
};

// Offset, in elements, of (block, kv_head, slot) in a cache pool.
inline size_t CacheOffset(const PagedAttentionShape& s, size_t block, size_t kv_head, size_t slot) {
  return ((block * s.num_kv_heads + kv_head) * s.block_size + slot) * s.head_dim;
}

// AVX-512 implementation; returns false (doing nothing) when the CPU lacks
// AVX-512F or head_dim is not one it is built for (16, 32, 64, 128, 256).
// `scores` has room for group × (last - first + 1) floats.
bool AttendAvx512(const AttentionItem& item, const PagedAttentionShape& s, size_t group, const void* k_cache,
                  const void* v_cache, float* scores);

// True when this CPU runs AttendAvx512.
bool HaveAvx512();

}  // namespace llmserve::kernels::cpu::internal
