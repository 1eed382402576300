#pragma once
// Prefill attention on tensor cores (bf16 mma.sync, fp32 softmax and
// accumulators in registers), flash-attention style: a thread block takes a
// tile of up to kPrefillTileTokens consecutive query positions of one
// request and one q head, and walks the request's keys in tiles of the same
// size, keeping a running max and sum per row. K and V tiles are copied from
// the paged cache into shared memory (the next while the current is used)
// and serve all the tile's queries.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "kernels/cuda/paged_attention.h"

namespace llmserve::kernels::cuda {

inline constexpr size_t kPrefillTileTokens = 64;
// Requests with at least this many tokens in a step take the tiled kernel.
inline constexpr size_t kPrefillMinTokens = 8;

// Whether the tiled kernel takes this head_dim (64 and 128).
bool PrefillAttentionSupports(size_t head_dim);

// The tiles (request, first token, count) of the requests in `query_start`
// ([requests + 1] token offsets) with at least kPrefillMinTokens tokens, and
// the tokens of the other requests.
void PlanPrefillTiles(const std::vector<int32_t>& query_start, std::vector<int32_t>* tiles,
                      std::vector<int32_t>* other_tokens);

// Runs args.prefill_tiles (args.num_prefill_tiles of them) over all heads.
Status PrefillAttention(const PagedAttentionArgs& args, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
