#include "engine_core/kv_connector/shared_storage_connector_scheduler.h"

#include <openssl/evp.h>

#include <cstring>
#include <memory>

#include <glog/logging.h>

#include "common/kv_transfer/shared_storage_layout.h"
#include "proto/shared_storage_metadata.h"

namespace llmserve::engine_core {

namespace {

void PutU32(EVP_MD_CTX* ctx, uint32_t v) { EVP_DigestUpdate(ctx, &v, sizeof(v)); }

void PutString(EVP_MD_CTX* ctx, const std::string& s) {
  PutU32(ctx, static_cast<uint32_t>(s.size()));
  EVP_DigestUpdate(ctx, s.data(), s.size());
}

}  // namespace

SharedStorageConnectorScheduler::SharedStorageConnectorScheduler(std::string root, int32_t block_size,
                                                                 size_t tp_size, bool producer, bool consumer)
    : root_(std::move(root)), block_size_(block_size), tp_size_(tp_size), producer_(producer), consumer_(consumer) {}

std::string SharedStorageConnectorScheduler::Key(const Request& request, int32_t num_tokens) {
  // u32 count | token ids (i32, little-endian) | u32 length | LoRA name | u32 length | cache salt
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  CHECK(ctx != nullptr && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1);
  PutU32(ctx.get(), static_cast<uint32_t>(num_tokens));
  EVP_DigestUpdate(ctx.get(), request.prompt_token_ids().data(), static_cast<size_t>(num_tokens) * sizeof(int32_t));
  PutString(ctx.get(), request.lora_name);
  PutString(ctx.get(), request.cache_salt);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  CHECK_EQ(EVP_DigestFinal_ex(ctx.get(), digest, &size), 1);
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
}

ExternalMatch SharedStorageConnectorScheduler::GetNumNewMatchedTokens(const Request& request,
                                                                      int32_t num_computed_tokens) {
  if (!consumer_ || request.sampling_params.prompt_logprobs.has_value()) return {};
  const int32_t prefix = common::SharedStoragePrefixTokens(request.num_prompt_tokens(), block_size_);
  if (prefix <= num_computed_tokens) return {};
  if (!common::SharedStorageComplete(root_, Key(request, prefix), tp_size_)) return {};
  return ExternalMatch{prefix - num_computed_tokens, false};
}

void SharedStorageConnectorScheduler::UpdateStateAfterAlloc(const Request& request,
                                                            std::span<const int32_t> block_ids,
                                                            int32_t num_external_tokens) {
  admitted_.insert(request.request_id);
  if (num_external_tokens <= 0) return;
  const int32_t prefix = common::SharedStoragePrefixTokens(request.num_prompt_tokens(), block_size_);
  const int32_t first = prefix - num_external_tokens;
  loads_[request.request_id] = Load{Key(request, prefix), first, prefix,
                                    std::vector<int32_t>(block_ids.begin(), block_ids.begin() + prefix / block_size_)};
}

proto::EncodedValue SharedStorageConnectorScheduler::BuildConnectorMeta(const proto::SchedulerOutput&,
                                                                        std::span<const ScheduledRequest> scheduled) {
  proto::SharedStorageMetadata meta;
  for (const ScheduledRequest& s : scheduled) {
    const Request& r = *s.request;
    if (auto load = loads_.find(r.request_id); load != loads_.end()) {
      Load& l = load->second;
      meta.requests.push_back(
          {r.request_id, std::move(l.key), false, l.first_token, l.end_token, std::move(l.block_ids)});
      continue;
    }
    if (!producer_) continue;
    // Saved in the step that completes the prefix (a long prompt's last
    // chunk), or in the first step of one whose whole prefix came from the
    // local prefix cache: its blocks hold the KV by then.
    const int32_t prefix = common::SharedStoragePrefixTokens(r.num_prompt_tokens(), block_size_);
    if (prefix == 0) continue;
    const int32_t end = s.num_computed_tokens + s.num_scheduled_tokens;
    const bool completes = s.num_computed_tokens < prefix && end >= prefix;
    const bool cached = s.num_computed_tokens >= prefix && admitted_.count(r.request_id) != 0;
    if (!completes && !cached) continue;
    std::string key = Key(r, prefix);
    if (common::SharedStorageComplete(root_, key, tp_size_)) continue;
    meta.requests.push_back({r.request_id, std::move(key), true, 0, prefix,
                             std::vector<int32_t>(r.block_ids.begin(), r.block_ids.begin() + prefix / block_size_)});
  }
  loads_.clear();
  admitted_.clear();
  if (meta.requests.empty()) return {};
  return proto::EncodeSharedStorageMetadata(meta);
}

FinishedTransfer SharedStorageConnectorScheduler::RequestFinished(const Request&, std::span<const int32_t>) {
  return {};  // saves complete within their step: nothing to wait for
}

}  // namespace llmserve::engine_core
