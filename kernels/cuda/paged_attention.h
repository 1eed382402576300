#pragma once
// Paged attention on the GPU for a flattened batch of prefill chunks and
// decodes: query token t (of request token_request[t], at positions[t])
// attends causally to its request's keys 0..positions[t] (the last
// sliding_window of them when set), read from the bf16 paged cache through
// the request's block table. Grouped-query: q head h reads KV head
// h / (num_heads / num_kv_heads).
//
// Long contexts split over `num_splits` thread blocks per (token, head)
// (split-K): each keeps its own running max and sum, and a second kernel
// merges them, so a decode batch of a few requests still fills the GPU.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace llmserve::kernels::cuda {

struct PagedAttentionArgs {
  const float* q = nullptr;                // token t's head h at q + t * q_stride + h * head_dim
  size_t q_stride = 0;
  const __nv_bfloat16* k_cache = nullptr;  // [block][kv_head][slot][head_dim]
  const __nv_bfloat16* v_cache = nullptr;
  const int32_t* positions = nullptr;      // [tokens]
  const int32_t* token_request = nullptr;  // [tokens]
  const int32_t* block_tables = nullptr;   // [requests × block_table_stride]
  size_t block_table_stride = 0;
  size_t tokens = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0, block_size = 0;
  size_t sliding_window = 0;               // 0: the whole prefix
  float scale = 1.f;
  __nv_bfloat16* out = nullptr;            // token t's head h at out + t * out_stride + h * head_dim
  size_t out_stride = 0;
  size_t num_splits = 1;                   // split-K factor (1: no merge pass)
  float* scratch = nullptr;                // PagedAttentionScratchFloats(...) floats when num_splits > 1
};

// Largest head_dim the kernel takes.
inline constexpr size_t kMaxAttentionHeadDim = 256;

// fp32 scratch the split-K pass needs.
inline size_t PagedAttentionScratchFloats(size_t tokens, size_t num_heads, size_t head_dim, size_t num_splits) {
  return num_splits > 1 ? tokens * num_heads * num_splits * (head_dim + 2) : 0;
}

// A split count for `tokens` queries over contexts up to `max_context`: one
// per 256 keys while the grid is small next to `num_sms`, at most 16.
size_t ChooseAttentionSplits(size_t tokens, size_t num_heads, size_t max_context, size_t num_sms);

Status PagedAttention(const PagedAttentionArgs& args, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
