#pragma once
// Attention over a paged KV cache for one flattened batch (vLLM's "super
// sequence": the query tokens of every request back to back).
//
// Cache layout, per layer, in fp32, bf16 or fp8:
//   K: [num_blocks][num_kv_heads][head_dim][block_size]  (transposed per block)
//   V: [num_blocks][num_kv_heads][block_size][head_dim]
// so one KV head's block is contiguous in both, and for K the block's keys of
// one dimension are next to each other (16 keys' scores are then plain vector
// FMAs over head_dim). Where the AMX kernel runs (bf16_products on an AMX CPU,
// see below) the cache is instead in the tile-ready layout, K and V swapped:
//   K: [num_blocks][num_kv_heads][block_size][head_dim]
//   V: [num_blocks][num_kv_heads][head_dim][block_size]
// whose blocks are AMX tile operands as they lie. WriteKvCache writes the
// layout PagedAttention reads; PagedAttentionAllowAvx512 / AllowBf16Products change it,
// so switch them only while no cache holds K/V.
// Logical position j of a request lives in block block_table[j / block_size],
// slot j % block_size.
//
// Work is split into (KV head, tile) items, a tile being up to 8 consecutive
// query tokens of one request, so each key block is read once for all of
// them.
//
// With shape.bf16_products on an AMX CPU (paged_attention_amx.cc), items are
// (KV head, up to 32 query rows of one request) and the products run on
// tiles; the same per-row determinism holds (see that file). Without AMX but
// with AVX512-BF16 (paged_attention_dpbf16.cc), the tiles above multiply bf16
// pairs with vdpbf16ps in the standard layout.
//
// Determinism: each query row (token, head) reduces over head_dim and over the
// context in a fixed order, so a token's output depends only on its query,
// its position and the cached K/V of its request — never on the rest of the
// batch or of its tile, on how its prompt was chunked, or on the thread count.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// Element type of the KV cache. kBF16 halves its memory and the bytes a
// decode step reads; K/V are rounded to bf16 (nearest even) when written.
// The fp8 types (kv_fp8.h) halve them again: K / k_scale and V / v_scale are
// rounded to E4M3 or E5M2 (nearest even, saturating), and read back times the
// scale. Only the fp32 kernels (portable and AVX-512) read fp8; bf16_products
// is then ignored.
enum class KvDType { kF32, kBF16, kFp8E4M3, kFp8E5M2 };

// Bytes of one cache element.
constexpr size_t KvElementSize(KvDType t) {
  return t == KvDType::kF32 ? 4 : t == KvDType::kBF16 ? 2 : 1;
}

constexpr bool IsFp8(KvDType t) { return t == KvDType::kFp8E4M3 || t == KvDType::kFp8E5M2; }

// Shapes shared by the cache writer and the attention kernel.
struct PagedAttentionShape {
  KvDType kv_dtype = KvDType::kF32;
  size_t num_q_heads = 0;
  size_t num_kv_heads = 0;
  size_t head_dim = 0;
  size_t block_size = 0;
  float scale = 1.0f;         // multiplies q·k
  size_t sliding_window = 0;  // 0: attend to the whole prefix
  // fp8 caches only: the cache holds K / k_scale and V / v_scale.
  float k_scale = 1.0f, v_scale = 1.0f;
  // Products in bf16 (what MatmulPrecision::kBF16 asks of the matmuls): q, K,
  // V and the softmax numerators are rounded to bf16 and multiplied with fp32
  // accumulation: on AMX tiles where the CPU has AMX, head_dim is a multiple
  // of 32, block_size a multiple of 32 and the GQA group at most 16; with
  // vdpbf16ps where the CPU has AVX512-BF16 (and the AMX kernel does not
  // run), head_dim is 16, 32, 64, 128 or 256 and the group at most 16.
  // Elsewhere, and for fp8 caches, the fp32 kernels run (the flag is then
  // ignored).
  bool bf16_products = false;
};

// Writes K and V of `tokens` tokens (token t's KV heads at k + t * k_stride,
// v + t * v_stride) into the cache slots slot_mapping[t] = block * block_size +
// offset. Negative slots are skipped (padding).
void WriteKvCache(const float* k, size_t k_stride, const float* v, size_t v_stride, size_t tokens,
                  const int64_t* slot_mapping, const PagedAttentionShape& shape, void* k_cache,
                  void* v_cache, ThreadPool& pool);

// WriteKvCache for one token: its KV heads at k and v go to cache slot `slot`
// (skipped when negative). For callers that already work token by token.
void WriteKvCacheToken(const float* k, const float* v, int64_t slot, const PagedAttentionShape& s, void* k_cache,
                       void* v_cache);

// Per-token inputs to the attention kernel.
struct PagedAttentionBatch {
  size_t tokens = 0;
  const int32_t* positions = nullptr;          // logical position of each query token
  const int32_t* token_request = nullptr;      // request index of each query token
  const int32_t* block_tables = nullptr;       // [num_requests × block_table_stride]
  size_t block_table_stride = 0;
};

// out[t][h] = softmax_j(scale * q[t][h]·K[j]) · V[j] over the request's cached
// positions j ≤ positions[t] (and > positions[t] - sliding_window when set).
// The token's own K/V must already be in the cache.
void PagedAttention(const float* q, size_t q_stride, const PagedAttentionBatch& batch,
                    const PagedAttentionShape& shape, const void* k_cache, const void* v_cache,
                    float* out, size_t out_stride, ThreadPool& pool);

// Chooses whether PagedAttention may use its AVX-512 implementation (default:
// yes, where the CPU has AVX-512F). The portable path gives the same results
// to within rounding; tests and benchmarks switch to compare the two.
void PagedAttentionAllowAvx512(bool allow);

// Chooses whether shapes with bf16_products may use the bf16-product kernels
// (AMX or vdpbf16ps; default: yes). false runs the fp32 kernels for them;
// benchmarks compare the two.
void PagedAttentionAllowBf16Products(bool allow);

// Scalar reference over contiguous per-token keys/values: for a single
// sequence of `tokens` tokens at positions 0..tokens-1 with k/v [tokens ×
// num_kv_heads × head_dim], causal attention in double precision.
void CausalAttentionReference(const float* q, const float* k, const float* v, size_t tokens,
                              const PagedAttentionShape& shape, float* out);

}  // namespace llmserve::kernels::cpu
