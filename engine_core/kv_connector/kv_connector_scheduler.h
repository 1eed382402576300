#pragma once
// The scheduler side of a KV connector (vLLM's KVConnectorBase_V1 in the
// SCHEDULER role): it tells the scheduler how much of a request's KV an
// external source can supply, learns which blocks were given to it, writes
// the per-step metadata the workers' side acts on, and decides whether a
// finished request's blocks must stay until its KV has been sent. The worker
// side (worker/kv_connector/) moves the data and reports back in
// ModelRunnerOutput.kv_connector_output.
//
// Call order in a step, as vLLM's scheduler makes it:
//   Schedule(): for a waiting request with no computed tokens,
//     GetNumNewMatchedTokens → (allocation) → UpdateStateAfterAlloc;
//     then, once the step is decided, BuildConnectorMeta.
//   UpdateFromOutput(): UpdateConnectorOutput with the workers' report, and
//     RequestFinished for each request that finished.
// A request whose load is asynchronous waits in WAITING_FOR_REMOTE_KVS, its
// blocks allocated, until a later report lists it in finished_recving.
//
// Not thread-safe: the scheduler's thread calls it.

#include <cstdint>
#include <optional>
#include <span>

#include "engine_core/request.h"
#include "proto/encoded_value.h"
#include "proto/model_runner_output.h"
#include "proto/scheduler_output.h"

namespace llmserve::engine_core {

// What GetNumNewMatchedTokens found.
struct ExternalMatch {
  // Tokens past the locally computed ones that the connector can supply;
  // nullopt: it cannot tell yet, the request waits (without blocking others)
  // and is asked again next step.
  std::optional<int32_t> num_tokens = 0;
  // True: the load runs across steps; the request waits in
  // WAITING_FOR_REMOTE_KVS until the workers report it received.
  bool load_async = false;
};

// What RequestFinished decided.
struct FinishedTransfer {
  // True: keep the request's blocks until the workers report the send done
  // (finished_sending).
  bool delay_free_blocks = false;
  // Parameters for the next hop (vLLM's kv_transfer_params), put on the
  // request's last output; empty for none.
  proto::EncodedValue kv_transfer_params;
};

// One request of the step being built, for BuildConnectorMeta.
struct ScheduledRequest {
  const Request* request;
  int32_t num_computed_tokens;   // before this step (loaded tokens included)
  int32_t num_scheduled_tokens;  // computed this step
};

class KVConnectorScheduler {
 public:
  virtual ~KVConnectorScheduler() = default;

  // vLLM's get_num_new_matched_tokens: how many tokens past
  // `num_computed_tokens` (the local prefix-cache hit, a multiple of the
  // block size) the connector can supply. Must leave the last prompt token
  // to compute. No side effects: a request may be asked again.
  virtual ExternalMatch GetNumNewMatchedTokens(const Request& request, int32_t num_computed_tokens) = 0;

  // vLLM's update_state_after_alloc: the request got blocks for its
  // computed, external and new tokens; `block_ids` are all of its blocks and
  // `num_external_tokens` is what GetNumNewMatchedTokens said (0 when
  // nothing is loaded). Called for every request admitted from the waiting
  // queue.
  virtual void UpdateStateAfterAlloc(const Request& request, std::span<const int32_t> block_ids,
                                     int32_t num_external_tokens) = 0;

  // vLLM's build_connector_meta: this step's metadata for the workers (for
  // SchedulerOutput.kv_connector_metadata), from the decided step (`output`,
  // and `scheduled`, its requests in decision order). Resets the step state.
  virtual proto::EncodedValue BuildConnectorMeta(const proto::SchedulerOutput& output,
                                                 std::span<const ScheduledRequest> scheduled) = 0;

  // vLLM's update_connector_output: the workers' report for the last step.
  virtual void UpdateConnectorOutput(const proto::KVConnectorOutput& /*output*/) {}

  // vLLM's request_finished: `request` reached a FINISHED_* state holding
  // `block_ids`. Called once per request.
  virtual FinishedTransfer RequestFinished(const Request& request, std::span<const int32_t> block_ids) = 0;
};

}  // namespace llmserve::engine_core
