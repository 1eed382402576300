#include "engine_core/request.h"

#include <algorithm>
#include <string>

namespace llmserve::engine_core {

Request::Request(int32_t handle_in, std::string request_id_in,
                 std::vector<int32_t> prompt_token_ids, StopConditions stop_in)
    : token_ids_(std::move(prompt_token_ids)),
      num_prompt_tokens_(static_cast<int32_t>(token_ids_.size())),
      handle(handle_in),
      ignore_eos_(stop_in.ignore_eos),
      has_stop_ids_(!stop_in.stop_token_ids.empty()),
      num_eos_inline_(0),
      max_tokens_(stop_in.max_tokens),
      min_tokens_(stop_in.min_tokens),
      eos_inline_{},
      request_id(std::move(request_id_in)),
      stop(std::move(stop_in)) {
  if (stop.eos_token_ids.size() <= kInlineEos) {
    num_eos_inline_ = static_cast<uint8_t>(stop.eos_token_ids.size());
    std::copy(stop.eos_token_ids.begin(), stop.eos_token_ids.end(), eos_inline_);
  } else {
    num_eos_inline_ = kInlineEos + 1;
  }
  // Room for the whole generation, so appends do not reallocate per token.
  token_ids_.reserve(token_ids_.size() + static_cast<size_t>(std::max(stop.max_tokens, 0)));
}

StatusOr<std::unique_ptr<Request>> Request::Create(int32_t handle, proto::EngineCoreRequest req,
                                                   int32_t max_model_len) {
  const auto prompt_len = static_cast<int64_t>(req.prompt_token_ids.size());
  const std::string& id = req.request_id;
  if (id.empty()) return Status::InvalidArgument("request id is empty");
  if (prompt_len == 0) return Status::InvalidArgument("request " + id + ": the prompt is empty");
  if (prompt_len >= max_model_len) {
    return Status::InvalidArgument("request " + id + ": the prompt has " +
                                   std::to_string(prompt_len) +
                                   " tokens, which leaves no room for output within max_model_len " +
                                   std::to_string(max_model_len));
  }
  for (int32_t t : req.prompt_token_ids) {
    if (t < 0) return Status::InvalidArgument("request " + id + ": negative prompt token id");
  }
  if (req.client_index < 0 || req.client_index > 65535) {
    return Status::InvalidArgument("request " + id + ": client_index " +
                                   std::to_string(req.client_index) + " is out of range");
  }
  const proto::SamplingParams& sp = req.sampling_params;
  StopConditions stop;
  stop.max_tokens = sp.max_tokens.value_or(max_model_len - static_cast<int32_t>(prompt_len));
  stop.min_tokens = sp.min_tokens;
  if (stop.max_tokens < 1) {
    return Status::InvalidArgument("request " + id + ": max_tokens must be at least 1, got " +
                                   std::to_string(stop.max_tokens));
  }
  if (stop.min_tokens < 0 || stop.min_tokens > stop.max_tokens) {
    return Status::InvalidArgument("request " + id + ": min_tokens must be in [0, max_tokens], got " +
                                   std::to_string(stop.min_tokens));
  }
  // Past max_model_len nothing is generated anyway; the clamp keeps the
  // token buffer's reservation bounded.
  stop.max_tokens = std::min<int32_t>(stop.max_tokens, max_model_len - static_cast<int32_t>(prompt_len));
  stop.ignore_eos = sp.ignore_eos;
  stop.stop_token_ids = sp.stop_token_ids;
  for (int32_t t : sp.all_stop_token_ids) {
    if (std::find(sp.stop_token_ids.begin(), sp.stop_token_ids.end(), t) == sp.stop_token_ids.end())
      stop.eos_token_ids.push_back(t);
  }
  proto::EncodedValue kv_transfer_params;
  Status extra = proto::FindEncodedEntry(sp.extra_args, "kv_transfer_params", &kv_transfer_params);
  if (!extra.ok()) return Status::InvalidArgument("request " + id + ": extra_args: " + extra.message());
  auto r = std::make_unique<Request>(handle, std::move(req.request_id),
                                     std::move(req.prompt_token_ids), std::move(stop));
  r->client_index = req.client_index;
  r->priority = req.priority;
  r->arrival_time = req.arrival_time;
  r->lora_name = req.lora_name.value_or("");
  r->cache_salt = req.cache_salt.value_or("");
  r->sampling_params = std::move(req.sampling_params);
  r->pooling_params = std::move(req.pooling_params);
  r->kv_transfer_params = std::move(kv_transfer_params);
  return r;
}

void Request::UpdateBlockHashes(const BlockHasher* hasher, int32_t block_size) {
  if (hasher == nullptr) return;
  const size_t full_blocks = token_ids_.size() / static_cast<size_t>(block_size);
  while (block_hashes.size() < full_blocks) {
    const size_t i = block_hashes.size();
    const BlockHash* parent = i == 0 ? nullptr : &block_hashes[i - 1];
    std::span<const int32_t> tokens(token_ids_.data() + i * block_size, block_size);
    block_hashes.push_back(
        hasher->Hash(parent, tokens, lora_name, i == 0 ? std::string_view(cache_salt) : ""));
  }
}

bool Request::CheckStop(int32_t max_model_len) {
  // Length limits first: they hold even while min_tokens suppresses EOS, so a
  // request can never sit at max_model_len without finishing. Only the hot
  // copies are read unless the request has many EOS ids or stop ids.
  if (num_tokens() >= max_model_len || num_output_tokens() >= max_tokens_) {
    status = RequestStatus::kFinishedLengthCapped;
    return true;
  }
  if (num_output_tokens() < min_tokens_) return false;
  const int32_t last = token_ids_.back();
  if (!ignore_eos_) {
    bool eos = false;
    if (num_eos_inline_ <= kInlineEos) {
      for (uint8_t i = 0; i < num_eos_inline_; ++i) eos |= eos_inline_[i] == last;
    } else {
      eos = std::find(stop.eos_token_ids.begin(), stop.eos_token_ids.end(), last) !=
            stop.eos_token_ids.end();
    }
    if (eos) {
      status = RequestStatus::kFinishedStopped;
      return true;
    }
  }
  if (has_stop_ids_ && std::find(stop.stop_token_ids.begin(), stop.stop_token_ids.end(), last) !=
                           stop.stop_token_ids.end()) {
    status = RequestStatus::kFinishedStopped;
    stop_reason = last;
    return true;
  }
  return false;
}

}  // namespace llmserve::engine_core
