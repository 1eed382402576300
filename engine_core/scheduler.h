#pragma once
// The scheduler: each step it spends one token budget on running requests
// first (decode steps, remaining prefill chunks), then on waiting ones
// (prefill, chunked when long), and emits the decision as a SchedulerOutput
// diff for the workers. When KV blocks run out it preempts (recompute) the
// last running request (FCFS) or the lowest-priority latest arrival
// (PRIORITY). UpdateFromOutput applies the sampled tokens, checks stop
// conditions, frees finished requests and groups outputs per frontend.
//
// Not thread-safe: the engine's main loop owns it. Hot-path containers are
// members reused across steps; requests are addressed by dense integer handles.
//
// Implemented in three files: scheduler.cc (requests in and out, the step's
// decision, preemption), scheduler_build_output.cc (the decision as the
// workers' SchedulerOutput diff) and scheduler_update.cc (UpdateFromOutput);
// structured outputs in scheduler_structured.cc and the KV connector's hooks
// in scheduler_kv_connector.cc.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/kv_transfer/kv_transfer_config.h"
#include "engine_core/kv_cache_manager.h"
#include "engine_core/kv_connector/kv_connector_scheduler.h"
#include "engine_core/request.h"
#include "engine_core/scheduler_config.h"
#include "engine_core/spec_decode_stats.h"
#include "engine_core/waiting_queue.h"
#include "proto/engine_core_output.h"
#include "proto/engine_core_request.h"
#include "proto/model_runner_output.h"
#include "proto/scheduler_output.h"
#include "base/status_or.h"

namespace llmserve::engine_core {

// What the KV connector did, since the scheduler was created.
struct KVConnectorCounters {
  int64_t loaded_requests = 0;    // admissions that took tokens from the connector
  int64_t loaded_tokens = 0;      // tokens they took (before any failure)
  int64_t failed_loads = 0;       // admissions whose load failed (in part)
  int64_t recomputed_tokens = 0;  // loaded tokens computed again after a failure
};

// One frontend's share of a step's outputs.
struct ClientOutputs {
  int32_t client_index = 0;          // the frontend (EngineCoreRequest.client_index)
  proto::EngineCoreOutputs outputs;  // its outputs, finished ids and maybe the stats
};

class Scheduler final {
 public:
  // Validates both configs (and that one max_model_len request fits in the KV
  // cache, so a lone request can always make progress).
  static StatusOr<std::unique_ptr<Scheduler>> Create(const SchedulerConfig& config,
                                                     const KVCacheConfig& kv_config);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a request. InvalidArgument for a bad or duplicate request,
  // ResourceExhausted when max_waiting_requests are already waiting (HTTP 429).
  Status AddRequest(proto::EngineCoreRequest request);

  // Finishes the named requests with `status` (a FINISHED_* state; ABORTED for
  // client aborts), freeing their blocks. Unknown or finished ids are ignored,
  // so aborting twice is harmless. Produces no token outputs; the ids are
  // reported to the workers and in `finished_requests`.
  void FinishRequests(std::span<const std::string> request_ids, RequestStatus status);

  // Lets requests with structured_outputs in (they are refused without a
  // manager). `manager` outlives the scheduler.
  void SetStructuredOutputManager(StructuredOutputManager* manager) { structured_ = manager; }
  // True while some request waits for its grammar to compile.
  bool HasGrammarsCompiling() const { return !grammar_waiting_.empty(); }

  // Runs `connector`'s scheduler side (engine_core/kv_connector/); before the
  // first request. `policy`: what a failed load does to its request.
  void SetKVConnector(std::unique_ptr<KVConnectorScheduler> connector, common::KVLoadFailurePolicy policy);
  // The connector's counters (all zero without one).
  const KVConnectorCounters& kv_connector_counters() const { return kv_counters_; }
  // Finished requests whose blocks stay until the workers report their KV transfer done.
  int32_t num_held_for_transfer() const { return static_cast<int32_t>(held_blocks_.size()); }

  // Decides this step. The returned object is reused by the next call.
  const proto::SchedulerOutput& Schedule();

  // Applies the workers' output for the step last returned by Schedule()
  // (`scheduler_output` must be that object). Tokens of requests finished
  // meanwhile are dropped. Replaces `*outputs` with one entry per frontend
  // that has outputs or finished ids (and, with log_stats, the stats on the
  // first entry). Pass the same vector every step: its buffers are reused.
  void UpdateFromOutput(const proto::SchedulerOutput& scheduler_output,
                        const proto::ModelRunnerOutput& model_output,
                        std::vector<ClientOutputs>* outputs);
  // The same, returning a fresh vector (allocates; for tests and tools).
  std::vector<ClientOutputs> UpdateFromOutput(const proto::SchedulerOutput& scheduler_output,
                                              const proto::ModelRunnerOutput& model_output) {
    std::vector<ClientOutputs> outputs;
    UpdateFromOutput(scheduler_output, model_output, &outputs);
    return outputs;
  }

  // For an engine that went idle without a step (its last requests were
  // aborted): hands over the finished ids and, with log_stats, the stats, as
  // UpdateFromOutput would, so the frontends' gauges see the idle engine.
  void TakeIdleOutputs(std::vector<ClientOutputs>* outputs);

  // Load and cache figures; counters are deltas since the previous call
  // (with log_stats, UpdateFromOutput calls it once per step).
  proto::SchedulerStats MakeStats();
  // The same figures without consuming the deltas (for ad-hoc queries such
  // as a "stats" utility call, so per-step stats stay complete).
  proto::SchedulerStats PeekStats() const;

  // Drops the prefix cache; false while requests hold blocks.
  bool ResetPrefixCache() { return kv_.ResetPrefixCache(); }
  // The KV events the cache queued since the last call (KVCacheConfig::enable_kv_cache_events).
  std::vector<proto::KVCacheEvent> TakeKVEvents() { return kv_.TakeKVEvents(); }

  // True when any request is waiting or running, or holds blocks for a KV
  // transfer (the workers must be stepped to report it done).
  bool HasRequests() const { return !running_.empty() || !waiting_.empty() || !held_blocks_.empty(); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t num_waiting() const { return waiting_.size(); }
  // The live request with this id, or nullptr (tests, introspection).
  const Request* FindRequest(std::string_view request_id) const;
  // True while a waiting or running request uses LoRA adapter `lora_name`.
  bool UsesLora(std::string_view lora_name) const;
  // Handles of running requests in scheduling order (tests).
  std::span<const int32_t> running() const { return running_; }
  const KVCacheManager& kv_cache_manager() const { return kv_; }
  const SchedulerConfig& config() const { return config_; }
  // Steps scheduled so far.
  int64_t step() const { return step_; }
  // Speculative decoding counters since the scheduler was created.
  const SpecDecodingStats& spec_decoding_stats() const { return spec_stats_; }

 private:
  enum class Kind : uint8_t { kNew, kResumed, kRunning };
  // One request in this step's decision.
  struct Scheduled {
    int32_t handle;
    int32_t num_tokens;           // scheduled this step
    int32_t num_computed_before;  // num_computed_tokens when scheduled
    int32_t first_new_block;      // index of the first block added this step
    Kind kind;
    int32_t num_drafts = 0;       // of num_tokens, speculative drafts to verify
  };

  Scheduler(const SchedulerConfig& config, const KVCacheConfig& kv_config);

  void ScheduleRunning(int32_t* budget, bool* preempted);
  void ScheduleWaiting(int32_t* budget);
  // Index in running_ of the request to preempt next.
  size_t PickVictim() const;
  void Preempt(int32_t handle);
  void BuildOutput();
  void UpdateScheduledMap();
  void EraseMapEntry(int32_t handle);
  // Position of the decision entry for model-output row `row` with id `id`, or -1.
  int32_t LocateScheduled(size_t row, const std::string& id) const;
  // Releases blocks, handle and id of a request that reached a FINISHED_* state.
  void ReleaseFinished(int32_t handle);
  void RecordEvent(Request& r, RequestEventType type);
  // Structured outputs (scheduler_structured.cc). Moves requests whose
  // grammar compiled to WAITING, and fails those whose grammar did not.
  void PromoteCompiledGrammars();
  // Fills output_'s bitmask rows for the constrained requests that sample this step.
  void FillGrammarBitmask();
  // Advances r's grammar by `token`; false when that finished the request
  // (grammar complete, or the token was not allowed).
  bool AdvanceGrammar(Request& r, int32_t token);
  // Emits an error output for each request whose grammar failed to compile.
  void EmitGrammarFailures();
  // KV connector (scheduler_kv_connector.cc).
  // A request admitted from the waiting queue with `num_external` tokens
  // from the connector, ending at `end_token` (loaded asynchronously when `load_async`).
  void AdmittedWithConnector(Request& r, int32_t end_token, int32_t num_external, bool load_async);
  // For a request in WAITING_FOR_REMOTE_KVS: true (and WAITING or PREEMPTED
  // again) once the workers reported its load done.
  bool PromoteLoadedRequest(Request& r);
  // SchedulerOutput.kv_connector_metadata for the step just decided.
  void BuildKVConnectorMeta();
  // The workers' connector report: finished transfers and failed loads.
  void ApplyKVConnectorOutput(const proto::ModelRunnerOutput& model_output);
  // Rolls back requests whose loaded blocks include one of `invalid_block_ids`.
  void HandleInvalidBlocks(const std::vector<int32_t>& invalid_block_ids);
  // Finishes with an error the requests whose load failed under the fail policy.
  void FailKVLoads();
  // Tells the connector (once) that `r` finished; returns its kv_transfer_params.
  proto::EncodedValue NotifyConnectorFinished(Request& r);
  // `r` is leaving WAITING_FOR_REMOTE_KVS finished: its blocks stay until the load is reported done.
  void HoldBlocksOfUnfinishedLoad(Request& r);
  // Keeps a released request's blocks until the workers report its transfer.
  void HoldFinishedBlocks(std::unique_ptr<Request> r);
  // Frees the blocks of a held request whose transfer the workers reported done.
  void FreeHeldBlocks(const std::string& request_id);
  // Prefetches (for writing) the output slot `client` will fill 4 rows on.
  void PrefetchOutputSlot(int32_t client) const;
  // Prefetches the requests of model-output rows 4 and 8 after `row`.
  void PrefetchRowsAhead(size_t row, size_t rows, const proto::ModelRunnerOutput& model_output) const;
  // Appends row `row`'s sampled tokens to request `handle`, checks its stop
  // conditions and fills its output slot; a finished one joins finished_handles_.
  // `num_drafts` drafts were verified: the rejected ones' KV is given back.
  void ApplySampled(int32_t handle, size_t row, int32_t num_drafts, const proto::ModelRunnerOutput& model_output);
  // A pooling request whose prompt this step finished: its pooled vector
  // (in model_output.pooler_output) goes out and it finishes.
  void FinishPooled(int32_t handle, const proto::ModelRunnerOutput& model_output);
  // Speculative decoding: rolls back the KV of drafts the workers rejected
  // (sampled.size() - 1 of `num_drafts` were accepted) and counts them.
  void RollBackRejected(Request& r, int32_t num_drafts, size_t num_sampled);
  // Proposes r's drafts for its next step (none for constrained requests).
  void ProposeDrafts(Request& r);
  // Moves this update's per-frontend outputs (and the stats) into `*outputs`.
  void HandOverOutputs(std::vector<ClientOutputs>* outputs);
  // The next output slot of `client`, reset but with its buffers kept.
  proto::EngineCoreOutput& NextOutput(int32_t client);
  static double Now();

  SchedulerConfig config_;
  KVCacheManager kv_;
  std::vector<std::unique_ptr<Request>> requests_;  // handle -> request (null: free slot)
  std::vector<int32_t> free_handles_;
  std::unordered_map<std::string, int32_t> id_to_handle_;
  WaitingQueue waiting_;
  std::vector<int32_t> running_;  // in admission order
  std::unique_ptr<SuffixProposer> suffix_;  // with suffix decoding only
  uint64_t next_sequence_number_ = 0;
  int64_t step_ = 0;

  // Reused per-step state.
  std::vector<Scheduled> decision_;
  // Handle that answered in each row of the last model output: workers list
  // requests in num_scheduled_tokens (id) order, the same from one decode step
  // to the next, so this guess spares most rows the id hash lookup.
  std::vector<int32_t> row_handle_;
  std::vector<int32_t> hit_blocks_;
  std::vector<int32_t> skipped_waiting_;
  std::unordered_set<std::string> running_loras_;  // ScheduleWaiting's adapters in use (max_loras)
  std::vector<int32_t> finished_handles_;
  std::vector<ClientOutputs> per_client_;  // indexed by client index; buffers reused
  std::vector<int32_t> per_client_used_;   // outputs filled this update, per client
  std::vector<std::vector<std::vector<int32_t>>> spare_block_lists_;  // for new_block_ids
  std::vector<uint64_t> req_id_owner_;  // per cached slot: sequence_number + 1 of its id's request
  std::vector<std::string> finished_for_workers_;     // since the last Schedule()
  std::vector<std::vector<std::string>> finished_for_clients_;  // since the last update
  // num_scheduled_tokens is a std::map (the wire contract). Steady decode
  // steps schedule the same requests again, so each request keeps its map
  // entry across steps (only the count is rewritten); entries of requests
  // not scheduled again are erased, and their nodes recycled.
  using ScheduledMap = std::map<std::string, int32_t>;
  std::vector<ScheduledMap::iterator> map_entry_;  // per handle, valid when in_map_
  std::vector<uint8_t> in_map_;                    // per handle
  std::vector<int64_t> map_stamp_;                 // per handle: step that last set its entry
  std::vector<int32_t> map_value_;                 // per handle: the count in its entry
  std::vector<int32_t> map_handles_;               // handles entered by the last BuildOutput
  std::vector<ScheduledMap::node_type> spare_nodes_;
  std::vector<ScheduledMap::iterator> stale_entries_;  // of released requests, erased next step
  proto::SchedulerOutput output_;

  // Structured outputs.
  struct GrammarFailure {
    std::string request_id;
    int32_t client_index;
    std::string message;
  };
  StructuredOutputManager* structured_ = nullptr;
  std::vector<int32_t> grammar_waiting_;          // handles in WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR
  int32_t num_constrained_ = 0;                   // live requests with structured_outputs
  std::vector<GrammarFailure> grammar_failures_;  // to report in the next update

  // KV connector.
  struct PendingLoad {
    int32_t handle;
    uint64_t sequence_number;  // tells the request from a later one in the same handle
    int32_t end_token;         // the loaded tokens end here (computed tokens at admission)
    int32_t num_external;      // loaded tokens
  };
  std::unique_ptr<KVConnectorScheduler> connector_;
  common::KVLoadFailurePolicy kv_failure_policy_ = common::KVLoadFailurePolicy::kRecompute;
  std::vector<PendingLoad> loaded_this_step_;          // synchronous loads of the step in flight
  std::vector<ScheduledRequest> connector_scheduled_;  // BuildConnectorMeta's view of the step
  std::unordered_set<std::string> finished_recving_;   // async loads reported done, not yet promoted
  std::unordered_map<std::string, std::unique_ptr<Request>> held_blocks_;  // finished, blocks held
  std::vector<int32_t> kv_load_failed_;  // handles to finish with an error (fail policy)
  KVConnectorCounters kv_counters_;

  // Stats.
  SpecDecodingStats spec_stats_;
  SpecDecodingStats reported_spec_;  // spec_stats_ at the last MakeStats
  int64_t num_preemptions_ = 0;
  int64_t reported_preemptions_ = 0;
  PrefixCacheStats reported_prefix_;
  std::vector<int32_t> iteration_tokens_;
};

}  // namespace llmserve::engine_core
