#pragma once
// Attention of DeepSeek's multi-head latent attention (MLA) in its absorbed
// form, over a paged cache of latents.
//
// The cache holds, per layer, one row of latent_dim values per token:
//   [num_blocks][block_size][latent_dim]   (fp32 or bf16)
// a row being the token's normalised KV latent (value_dim values) then its
// rotated rotary key. Every head attends to the same rows: with the query
// already absorbed into latent space (q_nope·W_UK, then q_rope), a head's
// score for position j is scale × q·row_j over all latent_dim values, and its
// output is Σ_j p_j row_j[0:value_dim], which W_UV later expands.
//
// Determinism: each (token, head) reduces over the row in fixed lanes and
// over the context in order, so its output depends only on its query, its
// position and its request's cached rows: never on the rest of the batch,
// on chunking, or on the thread count.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

struct MlaAttentionShape {
  KvDType kv_dtype = KvDType::kF32;  // kF32 or kBF16
  size_t num_heads = 0;
  size_t latent_dim = 0;  // values per cached row (kv_lora_rank + qk_rope_head_dim)
  size_t value_dim = 0;   // the first value_dim of a row are the value (kv_lora_rank)
  size_t block_size = 0;
  float scale = 1.0f;     // multiplies q·row
};

// Writes one token's latent row (latent_dim floats) into cache slot `slot`
// = block * block_size + offset (skipped when negative).
void WriteMlaCacheToken(const float* row, int64_t slot, const MlaAttentionShape& shape, void* cache);

// out[t][h][0:value_dim] (heads value_dim apart, tokens out_stride apart) =
// softmax_j(scale · q[t][h]·row_j) · row_j[0:value_dim] over the request's
// cached positions j ≤ positions[t]; q[t][h] is latent_dim floats, heads
// latent_dim apart, tokens q_stride apart. The token's own row must already
// be in the cache.
void MlaAttention(const float* q, size_t q_stride, const PagedAttentionBatch& batch, const MlaAttentionShape& shape,
                  const void* cache, float* out, size_t out_stride, ThreadPool& pool);

}  // namespace llmserve::kernels::cpu
