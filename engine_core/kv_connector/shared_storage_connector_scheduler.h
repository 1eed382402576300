#pragma once
// The scheduler side of the SharedStorageConnector (vLLM's debugging and test
// connector, renamed ExampleConnector at vLLM main): a producer saves each
// prompt's block-aligned prefix of KV to files under shared_storage_path
// (common/kv_transfer/shared_storage_layout.h); a consumer that gets the
// same prompt loads those files into its blocks instead of computing them.
// Loads are synchronous (in the step that computes the prompt's tail), so
// no request ever waits in WAITING_FOR_REMOTE_KVS, and nothing is sent.
//
// A folder's name is a SHA-256 over the prefix's token ids, the request's
// LoRA adapter and its cache salt: requests that would not share prefix-cache
// blocks do not share files either. Only kv_producer / kv_both save and
// only kv_consumer / kv_both load; a request asking for prompt logprobs is
// never loaded (it needs every prompt position's logits).

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "engine_core/kv_connector/kv_connector_scheduler.h"

namespace llmserve::engine_core {

class SharedStorageConnectorScheduler final : public KVConnectorScheduler {
 public:
  // `root`: shared_storage_path; `tp_size`: workers whose markers make a
  // folder complete.
  SharedStorageConnectorScheduler(std::string root, int32_t block_size, size_t tp_size, bool producer,
                                  bool consumer);

  ExternalMatch GetNumNewMatchedTokens(const Request& request, int32_t num_computed_tokens) override;
  void UpdateStateAfterAlloc(const Request& request, std::span<const int32_t> block_ids,
                             int32_t num_external_tokens) override;
  proto::EncodedValue BuildConnectorMeta(const proto::SchedulerOutput& output,
                                         std::span<const ScheduledRequest> scheduled) override;
  FinishedTransfer RequestFinished(const Request& request, std::span<const int32_t> block_ids) override;

  // The folder name of the first `num_tokens` prompt tokens of `request`.
  static std::string Key(const Request& request, int32_t num_tokens);

 private:
  // A load decided this step.
  struct Load {
    std::string key;
    int32_t first_token;  // the local prefix-cache hit ends here
    int32_t end_token;
    std::vector<int32_t> block_ids;
  };

  const std::string root_;
  const int32_t block_size_;
  const size_t tp_size_;
  const bool producer_;
  const bool consumer_;
  std::unordered_map<std::string, Load> loads_;      // this step's, by request id
  std::unordered_set<std::string> admitted_;         // requests admitted this step
};

}  // namespace llmserve::engine_core
