#pragma once
// Paged attention on the GPU for a flattened batch of prefill chunks and
// decodes: query token t (of request token_request[t], at positions[t])
// attends causally to its request's keys 0..positions[t] (the last
// sliding_window of them when set), read from the bf16 paged cache through
// the request's block table. Grouped-query: q head h reads KV head
// h / (num_heads / num_kv_heads), and the per-token kernel serves the q
// heads of one KV head from one thread block (AttentionBlocksPerToken).
//
// Long contexts split over `num_splits` thread blocks per (token, block)
// (split-K): each keeps its own running max and sum, and a second kernel
// merges them, so a decode batch of a few requests still fills the GPU.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace llmserve::kernels::cuda {

struct PagedAttentionArgs {
  const float* q = nullptr;  // token t's head h at q + t * q_stride + h * head_dim
  size_t q_stride = 0;
  const __nv_bfloat16* k_cache = nullptr;  // [block][kv_head][slot][head_dim]
  const __nv_bfloat16* v_cache = nullptr;
  const int32_t* positions = nullptr;      // [tokens]
  const int32_t* token_request = nullptr;  // [tokens]
  const int32_t* block_tables = nullptr;   // [requests × block_table_stride]
  size_t block_table_stride = 0;
  size_t tokens = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0, block_size = 0;
  size_t sliding_window = 0;  // 0: the whole prefix
  float scale = 1.f;
  __nv_bfloat16* out = nullptr;  // token t's head h at out + t * out_stride + h * head_dim
  size_t out_stride = 0;
  size_t num_splits = 1;     // split-K factor (1: no merge pass)
  float* scratch = nullptr;  // PagedAttentionScratchFloats(...) floats when num_splits > 1
  // When set, the per-token kernel runs only these tokens (the rest are
  // prefill tiles, below).
  const int32_t* token_list = nullptr;
  size_t token_list_size = 0;
  // Prefill tiles for the tensor-core kernel (prefill_attention.h): triples
  // (request, first token, count) of at most kPrefillTileTokens consecutive
  // positions of one request.
  const int32_t* prefill_tiles = nullptr;
  size_t num_prefill_tiles = 0;
};

// Largest head_dim the kernel takes.
inline constexpr size_t kMaxAttentionHeadDim = 256;

// fp32 scratch the split-K pass needs.
inline size_t PagedAttentionScratchFloats(size_t tokens, size_t num_heads, size_t head_dim, size_t num_splits) {
  return num_splits > 1 ? tokens * num_heads * num_splits * (head_dim + 2) : 0;
}

// Thread blocks per query token: one per KV head where 2, 4 or 8 q heads
// share it, else one per q head.
size_t AttentionBlocksPerToken(size_t num_heads, size_t num_kv_heads);

// A split count for `tokens` queries of `blocks_per_token` thread blocks
// over contexts up to `max_context`: one per 128 keys while the grid has
// fewer than 8 blocks per SM, at most 16.
size_t ChooseAttentionSplits(size_t tokens, size_t blocks_per_token, size_t max_context, size_t num_sms);

// Runs the prefill tiles (when any) and the per-token kernel over the listed
// tokens (all tokens when there is no list).
Status PagedAttention(const PagedAttentionArgs& args, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
