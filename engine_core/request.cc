#include "engine_core/request.h"

#include <algorithm>

namespace llmserve::engine_core {

Request::Request(int32_t handle_in, std::string request_id_in,
                 std::vector<int32_t> prompt_token_ids, StopConditions stop_in)
    : handle(handle_in),
      request_id(std::move(request_id_in)),
      stop(std::move(stop_in)),
      token_ids_(std::move(prompt_token_ids)),
      num_prompt_tokens_(static_cast<int32_t>(token_ids_.size())) {
  // Room for the whole generation, so appends do not reallocate per token.
  token_ids_.reserve(token_ids_.size() + static_cast<size_t>(std::max(stop.max_tokens, 0)));
}

void Request::UpdateBlockHashes(const BlockHasher* hasher, int32_t block_size) {
  if (hasher == nullptr) return;
  const size_t full_blocks = token_ids_.size() / static_cast<size_t>(block_size);
  while (block_hashes.size() < full_blocks) {
    const size_t i = block_hashes.size();
    const BlockHash* parent = i == 0 ? nullptr : &block_hashes[i - 1];
    std::span<const int32_t> tokens(token_ids_.data() + i * block_size, block_size);
    block_hashes.push_back(
        hasher->Hash(parent, tokens, lora_id, i == 0 ? std::string_view(cache_salt) : ""));
  }
}

bool Request::CheckStop(int32_t max_model_len) {
  // Length limits first: they hold even while min_tokens suppresses EOS, so a
  // request can never sit at max_model_len without finishing.
  if (num_tokens() >= max_model_len || num_output_tokens() >= stop.max_tokens) {
    status = RequestStatus::kFinishedLengthCapped;
    return true;
  }
  if (num_output_tokens() < stop.min_tokens) return false;
  const int32_t last = token_ids_.back();
  if (!stop.ignore_eos &&
      std::find(stop.eos_token_ids.begin(), stop.eos_token_ids.end(), last) !=
          stop.eos_token_ids.end()) {
    status = RequestStatus::kFinishedStopped;
    return true;
  }
  if (std::find(stop.stop_token_ids.begin(), stop.stop_token_ids.end(), last) !=
      stop.stop_token_ids.end()) {
    status = RequestStatus::kFinishedStopped;
    stop_reason = last;
    return true;
  }
  return false;
}

}  // namespace llmserve::engine_core
