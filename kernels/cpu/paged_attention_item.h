#pragma once
// Internal to paged_attention*.cc: one unit of attention work — a tile of
// consecutive query tokens of one request, each with its GQA group of heads,
// against one KV head — and its implementations.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/paged_attention.h"

namespace llmserve::kernels::cpu::internal {

// Query tokens per tile (the AVX-512 kernel reuses each key block for all
// of them).
inline constexpr size_t kMaxTileTokens = 8;

struct AttentionTile {
  const int32_t* table = nullptr;  // the request's block table
  size_t kv_head = 0;
  size_t tokens = 0;               // 1..kMaxTileTokens
  const float* q[kMaxTileTokens] = {};  // token i's group's first query head; heads head_dim apart
  float* out[kMaxTileTokens] = {};      // token i's group's first output head
  size_t first[kMaxTileTokens] = {};    // token i attends to key positions [first, last]
  size_t last[kMaxTileTokens] = {};
};

// Element offset of the key vector (block, kv_head, slot): keys are stored
// transposed per block, [num_blocks][num_kv_heads][head_dim][block_size], so
// the keys of one block and dimension are contiguous (and a key vector is
// strided by block_size).
inline size_t KeyOffset(const PagedAttentionShape& s, size_t block, size_t kv_head, size_t slot) {
  return (block * s.num_kv_heads + kv_head) * s.block_size * s.head_dim + slot;
}

// Element offset of the value vector (block, kv_head, slot): values are
// [num_blocks][num_kv_heads][block_size][head_dim].
inline size_t ValueOffset(const PagedAttentionShape& s, size_t block, size_t kv_head, size_t slot) {
  return ((block * s.num_kv_heads + kv_head) * s.block_size + slot) * s.head_dim;
}

// The tile-ready layout (the AMX kernel's): element offset of block `block`
// of KV head `kv_head`, whose K is [block_size][head_dim] and V
// [head_dim][block_size] from there.
inline size_t TileReadyBlockOffset(const PagedAttentionShape& s, size_t block, size_t kv_head) {
  return (block * s.num_kv_heads + kv_head) * s.block_size * s.head_dim;
}

// Whether caches of shape s are in the tile-ready layout: exactly when
// PagedAttention runs the AMX kernel for s (KeyOffset / ValueOffset describe
// the other caches).
bool TileReadyLayout(const PagedAttentionShape& s);

// AVX-512 implementation; returns false (doing nothing) when the CPU lacks
// AVX-512F, the group is larger than 16, or head_dim is not one it is built
// for (16, 32, 64, 128, 256). `scores` has room for tile.tokens × group ×
// (longest context of the tile) floats.
bool AttendTileAvx512(const AttentionTile& tile, const PagedAttentionShape& s, size_t group,
                      const void* k_cache, const void* v_cache, float* scores);

// True when this CPU runs AttendTileAvx512.
bool HaveAvx512();

// True when AttendTileDpbf16 may run shape s: s.bf16_products, the active
// ISA has AVX512-BF16 (ActiveIsa() >= Isa::kAvx512Bf16), GQA group <= 16.
bool Dpbf16AttentionUsable(const PagedAttentionShape& s);

// AttendTileAvx512 with bf16 products on vdpbf16ps (paged_attention_dpbf16.cc);
// call only when Dpbf16AttentionUsable(s). Returns false (doing nothing) for
// a head_dim it is not built for (16, 32, 64, 128, 256).
bool AttendTileDpbf16(const AttentionTile& tile, const PagedAttentionShape& s, size_t group,
                      const void* k_cache, const void* v_cache, float* scores);

// True when PagedAttentionAmx handles shape s on this CPU: s.bf16_products,
// AMX, head_dim and block_size multiples of 32, GQA group of 1..16.
bool AmxAttentionUsable(const PagedAttentionShape& s);

// PagedAttention with bf16 products on AMX tiles (paged_attention_amx.cc);
// call only when AmxAttentionUsable(s).
void PagedAttentionAmx(const float* q, size_t q_stride, const PagedAttentionBatch& batch,
                       const PagedAttentionShape& s, const void* k_cache, const void* v_cache, float* out,
                       size_t out_stride, ThreadPool& pool);

}  // namespace llmserve::kernels::cpu::internal
