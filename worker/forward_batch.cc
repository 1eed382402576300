#include "worker/forward_batch.h"

#include <algorithm>
#include <string>

namespace llmserve::worker {

void ForwardBatch::AddRequest(const std::vector<int32_t>& tokens, int32_t start_pos,
                              const std::vector<int32_t>& blocks, size_t block_size, bool want_logits,
                              int32_t lora_slot) {
  if (query_start.empty()) query_start.push_back(0);
  // request_lora stays empty until a request uses an adapter.
  if (lora_slot >= 0 || !request_lora.empty()) {
    request_lora.resize(context_lens.size(), -1);
    request_lora.push_back(lora_slot);
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t pos = start_pos + static_cast<int32_t>(i);
    token_ids.push_back(tokens[i]);
    positions.push_back(pos);
    const size_t b = static_cast<size_t>(pos) / block_size;
    slot_mapping.push_back(b < blocks.size()
                               ? static_cast<int64_t>(blocks[b]) * static_cast<int64_t>(block_size) +
                                     static_cast<int64_t>(static_cast<size_t>(pos) % block_size)
                               : -1);
  }
  query_start.push_back(static_cast<int32_t>(token_ids.size()));
  context_lens.push_back(start_pos + static_cast<int32_t>(tokens.size()));
  if (want_logits && !tokens.empty()) logits_indices.push_back(static_cast<int32_t>(token_ids.size()) - 1);
  pending_blocks_.push_back(blocks);
}

void ForwardBatch::AddLogitsRows(size_t n) {
  for (size_t i = n; i > 0; --i) logits_indices.push_back(static_cast<int32_t>(token_ids.size() - i));
}

void ForwardBatch::FinishBlockTables() {
  block_table_stride = 1;
  for (const auto& b : pending_blocks_) block_table_stride = std::max(block_table_stride, b.size());
  block_tables.assign(pending_blocks_.size() * block_table_stride, 0);
  for (size_t r = 0; r < pending_blocks_.size(); ++r) {
    std::copy(pending_blocks_[r].begin(), pending_blocks_[r].end(), block_tables.begin() + r * block_table_stride);
  }
  pending_blocks_.clear();
}

Status ForwardBatch::Validate(size_t vocab_size, size_t num_blocks, size_t block_size) const {
  const size_t t = num_tokens(), r = num_requests();
  if (positions.size() != t || slot_mapping.size() != t) {
    return Status::InvalidArgument("batch: token_ids, positions and slot_mapping differ in length");
  }
  if (query_start.size() != r + 1 || (r > 0 && static_cast<size_t>(query_start[r]) != t) ||
      (!query_start.empty() && query_start[0] != 0)) {
    return Status::InvalidArgument("batch: query_start must have num_requests + 1 entries from 0 to num_tokens");
  }
  if (!request_lora.empty() && request_lora.size() != r) {
    return Status::InvalidArgument("batch: request_lora must be empty or have one entry per request");
  }
  if (block_tables.size() != r * block_table_stride) {
    return Status::InvalidArgument("batch: block_tables is not num_requests × block_table_stride");
  }
  for (size_t i = 0; i < t; ++i) {
    if (token_ids[i] < 0 || static_cast<size_t>(token_ids[i]) >= vocab_size) {
      return Status::InvalidArgument("batch: token id " + std::to_string(token_ids[i]) + " at index " +
                                     std::to_string(i) + " is outside the vocabulary (" +
                                     std::to_string(vocab_size) + ")");
    }
    if (slot_mapping[i] >= static_cast<int64_t>(num_blocks * block_size)) {
      return Status::InvalidArgument("batch: slot " + std::to_string(slot_mapping[i]) + " of token " +
                                     std::to_string(i) + " is outside the KV cache");
    }
  }
  for (size_t q = 0; q < r; ++q) {
    if (query_start[q] > query_start[q + 1]) return Status::InvalidArgument("batch: query_start decreases");
    const size_t ctx = static_cast<size_t>(std::max(0, context_lens[q]));
    const size_t needed_blocks = (ctx + block_size - 1) / block_size;
    if (needed_blocks > block_table_stride) {
      return Status::InvalidArgument("batch: request " + std::to_string(q) + " needs " +
                                     std::to_string(needed_blocks) + " blocks but its block table has " +
                                     std::to_string(block_table_stride));
    }
    for (size_t b = 0; b < needed_blocks; ++b) {
      const int32_t id = block_tables[q * block_table_stride + b];
      if (id < 0 || static_cast<size_t>(id) >= num_blocks) {
        return Status::InvalidArgument("batch: request " + std::to_string(q) + " block " + std::to_string(id) +
                                       " is outside the KV cache (" + std::to_string(num_blocks) + " blocks)");
      }
    }
    for (int32_t i = query_start[q]; i < query_start[q + 1]; ++i) {
      if (positions[i] < 0 || positions[i] >= context_lens[q]) {
        return Status::InvalidArgument("batch: position " + std::to_string(positions[i]) + " of token " +
                                       std::to_string(i) + " is outside its request's context of " +
                                       std::to_string(context_lens[q]));
      }
    }
  }
  for (int32_t li : logits_indices) {
    if (li < 0 || static_cast<size_t>(li) >= t) return Status::InvalidArgument("batch: logits index out of range");
  }
  return Status::Ok();
}

}  // namespace llmserve::worker
