#pragma once
// One flattened batch ("super sequence"): the scheduled tokens of every
// request back to back — prefill chunks and single-token decodes mixed — with
// what attention and the KV cache writer need to find each request's blocks.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace llmserve::worker {

struct ForwardBatch {
  std::vector<int32_t> token_ids;       // [T] input token of each scheduled position
  std::vector<int32_t> positions;       // [T] its position in its request
  std::vector<int32_t> query_start;     // [R + 1] request r's tokens are [query_start[r], query_start[r+1])
  std::vector<int32_t> context_lens;    // [R] tokens of request r in the cache after this step
  std::vector<int32_t> block_tables;    // [R × block_table_stride] KV block ids of each request
  size_t block_table_stride = 0;        // max blocks per request in this batch
  std::vector<int64_t> slot_mapping;    // [T] cache slot (block * block_size + offset) for each token's K/V
  std::vector<int32_t> logits_indices;  // token indices whose logits are computed, in output order
  // [R] each request's LoRA adapter slot in the model (-1: none); empty:
  // no request uses an adapter.
  std::vector<int32_t> request_lora;

  size_t num_tokens() const { return token_ids.size(); }
  size_t num_requests() const { return context_lens.size(); }

  // Appends one request's chunk: `tokens` at positions start_pos.., using
  // `blocks` (block ids covering at least start_pos + tokens.size() positions).
  // When `want_logits`, its last token's index is added to logits_indices.
  // `lora_slot` is its adapter's slot in the model, or -1 for none.
  // Call FinishBlockTables() after the last request.
  void AddRequest(const std::vector<int32_t>& tokens, int32_t start_pos,
                  const std::vector<int32_t>& blocks, size_t block_size, bool want_logits,
                  int32_t lora_slot = -1);
  // Adds the last `n` tokens of the request added last to logits_indices, in
  // order (speculative decoding verifies several positions of one request).
  void AddLogitsRows(size_t n);
  // Lays the per-request block lists added so far out as block_tables.
  void FinishBlockTables();

  // Checks sizes and ranges against the model and cache: token ids < vocab,
  // positions inside their request's context, block ids < num_blocks, slots
  // inside the cache. Errors say which token or request is wrong.
  Status Validate(size_t vocab_size, size_t num_blocks, size_t block_size) const;

 private:
  std::vector<std::vector<int32_t>> pending_blocks_;
};

}  // namespace llmserve::worker
