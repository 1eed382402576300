#pragma once
// One request's state inside the engine core: its tokens, how far the KV cache
// has computed them, its KV blocks, its block hashes and its stop conditions.
// Owned by the Scheduler; the KVCacheManager edits the KV fields.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <memory>

#include "engine_core/block_hash.h"
#include "engine_core/request_status.h"
#include "engine_core/structured_output_request.h"
#include "proto/engine_core_request.h"
#include "proto/sampling_params.h"
#include "base/status_or.h"

namespace llmserve::engine_core {

// The stop conditions the engine checks after each sampled token (stop strings
// are the frontend's business: it detokenizes and aborts).
struct StopConditions {
  int32_t max_tokens = 16;              // finish LENGTH_CAPPED after this many output tokens
  int32_t min_tokens = 0;               // EOS / stop ids do not stop before this many outputs
  bool ignore_eos = false;              // keep generating past EOS
  std::vector<int32_t> eos_token_ids;   // the model's EOS ids (tokenizer + generation config)
  std::vector<int32_t> stop_token_ids;  // user stop ids; the id becomes the stop reason
};

// Timestamped life-cycle events reported to the frontend (vLLM's EngineCoreEvent).
enum class RequestEventType : uint8_t { kQueued = 1, kScheduled = 2, kPreempted = 3 };
struct RequestEvent {
  RequestEventType type;  // what happened
  double timestamp;       // monotonic seconds (common clock of the engine process)
};

// alignas(64): the first two cache lines hold everything a decode step reads
// or writes (Schedule, AllocateSlots, UpdateFromOutput, CheckStop), so after
// the model step has evicted the caches a running request costs two line
// fills there instead of six, plus the heap lines of its tokens and id.
class alignas(64) Request final {
 public:
  // A request in WAITING with the given prompt; `handle` is the scheduler's
  // dense integer id for it.
  Request(int32_t handle, std::string request_id, std::vector<int32_t> prompt_token_ids,
          StopConditions stop);
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  // Builds a request from the wire form, checking what the engine relies on:
  // a non-empty prompt shorter than max_model_len, max_tokens >= 1,
  // 0 <= min_tokens <= max_tokens. EOS ids are all_stop_token_ids minus
  // stop_token_ids; a missing max_tokens means "up to max_model_len".
  static StatusOr<std::unique_ptr<Request>> Create(int32_t handle, proto::EngineCoreRequest request,
                                                   int32_t max_model_len);

  // Prompt + output token ids so far.
  std::span<const int32_t> all_token_ids() const { return token_ids_; }
  // The prompt token ids.
  std::span<const int32_t> prompt_token_ids() const {
    return std::span<const int32_t>(token_ids_).first(num_prompt_tokens_);
  }
  // The output token ids so far.
  std::span<const int32_t> output_token_ids() const {
    return std::span<const int32_t>(token_ids_).subspan(num_prompt_tokens_);
  }
  int32_t num_tokens() const { return static_cast<int32_t>(token_ids_.size()); }
  int32_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens_; }

  // Appends one sampled token (block hashes are extended separately).
  void AppendOutputToken(int32_t token) { token_ids_.push_back(token); }

  // Hashes every block that became full since the last call (no-op when
  // `hasher` is null, i.e. prefix caching is off).
  void UpdateBlockHashes(const BlockHasher* hasher, int32_t block_size);

  // Checks the stop conditions after a token was appended; on a stop sets
  // `status` (and `stop_reason` for a stop token id) and returns true.
  bool CheckStop(int32_t max_model_len);

  bool is_finished() const { return IsFinished(status); }

  // At most this many EOS ids are checked from the request's hot lines; more
  // (rare) are looked up in stop.eos_token_ids.
  static constexpr size_t kInlineEos = 2;

 private:
  // ---- cache line 0: tokens and per-step scheduling state ----
  std::vector<int32_t> token_ids_;  // prompt + output
  int32_t num_prompt_tokens_;

 public:
  const int32_t handle;             // the scheduler's dense id (index into its table)
  int32_t num_computed_tokens = 0;  // tokens whose KV is computed or scheduled
  int32_t scheduled_index = -1;     // its entry in the last scheduling step's decision
  int64_t last_scheduled_step = -1; // the scheduler step that last scheduled it
  uint64_t sequence_number = 0;     // admission order, breaks priority ties
  int32_t client_index = 0;         // which frontend process gets the outputs
  RequestStatus status = RequestStatus::kWaiting;

 private:
  // Copies of `stop` that CheckStop reads (set once by the constructor).
  bool ignore_eos_;                 // stop.ignore_eos
  bool has_stop_ids_;               // !stop.stop_token_ids.empty()
  uint8_t num_eos_inline_;          // EOS ids in eos_inline_, or kInlineEos + 1: see the vector
  int32_t max_tokens_;              // stop.max_tokens
  int32_t min_tokens_;              // stop.min_tokens
  int32_t eos_inline_[kInlineEos];  // the first EOS ids

 public:
  // ---- cache line 1: KV cache state (written by KVCacheManager) ----
  int32_t num_cached_blocks = 0;        // leading blocks already entered in the prefix cache
  int32_t num_cached_tokens = -1;       // prefix-cache hit at first schedule (-1: not yet)
  std::vector<int32_t> block_ids;       // the KV blocks, in token order
  std::vector<BlockHash> block_hashes;  // one per full block of all_token_ids()
  int32_t stop_reason = -1;             // the stop token id that finished it, or -1
  int32_t num_preemptions = 0;          // times preempted (recomputed)

  // ---- cache line 2: identity and events ----
  const std::string request_id;     // the client-visible id
  std::vector<RequestEvent> events; // not yet reported events

  // ---- cold: client data ----
  int32_t priority = 0;            // lower value = served earlier (PRIORITY policy)
  double arrival_time = 0;         // seconds, as the frontend stamped it
  std::string lora_name;           // empty: no adapter; part of every block hash
  std::string cache_salt;          // part of the first block hash; isolates tenants
  const StopConditions stop;       // when to finish (CheckStop reads the copies above)
  proto::SamplingParams sampling_params;  // as the client sent them (for the workers)
  std::optional<proto::PoolingParams> pooling_params;  // set: a pooling request (finishes with its prefill)
  std::unique_ptr<StructuredOutputRequest> structured_output;  // set when the output is constrained
  std::vector<int32_t> spec_token_ids;  // speculative drafts to verify next step (decoding only)

  // ---- KV connector state (engine_core/kv_connector/) ----
  // The client's kv_transfer_params (SamplingParams.extra_args
  // ["kv_transfer_params"], as vLLM carries them); empty for none.
  proto::EncodedValue kv_transfer_params;
  int32_t num_external_computed_tokens = 0;  // tokens a connector loaded at admission
  bool connector_finished = false;  // the connector's RequestFinished was called
  bool hold_blocks = false;         // keep the blocks past the finish until the workers report the transfer
  bool kv_load_failed = false;      // a load from the connector failed: it computes its KV itself from now on
};

}  // namespace llmserve::engine_core
