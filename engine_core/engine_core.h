#pragma once
// EngineCore: the scheduler and an executor, stepped by the engine's main loop
// (or by the offline LLM class). step() = schedule -> execute -> update.
// No IPC here; the engine process wraps it with its input and output threads.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine_core/engine_loras.h"
#include "engine_core/executor.h"
#include "engine_core/kv_cache_manager.h"
#include "engine_core/kv_event_publisher.h"
#include "engine_core/scheduler.h"
#include "engine_core/scheduler_config.h"
#include "engine_core/structured_output_manager.h"
#include "proto/engine_core_request.h"
#include "base/status_or.h"

namespace llmserve::engine_core {

struct EngineCoreConfig {
  SchedulerConfig scheduler;  // budgets and policy (max_model_len is shared with kv)
  KVCacheConfig kv;           // num_blocks 0: as many as the executor fits
  int32_t engine_index = 0;   // this engine's DP rank, stamped on outputs
  std::vector<LoraAdapterInfo> lora_modules;  // adapters the executor's workers loaded at start
  // --kv-transfer-config: the scheduler side of the connector it names (the
  // executor's workers run the worker side); `tensor_parallel_size` workers.
  common::KVTransferConfig kv_transfer;
  size_t tensor_parallel_size = 1;
};

class EngineCore final {
 public:
  // Initializes the executor's KV cache and builds the scheduler for the
  // number of blocks it reports.
  // With `structured_output`, requests may carry structured_outputs.
  static StatusOr<std::unique_ptr<EngineCore>> Create(
      EngineCoreConfig config, std::unique_ptr<Executor> executor,
      std::unique_ptr<StructuredOutputManager> structured_output = nullptr);
  ~EngineCore();
  EngineCore(const EngineCore&) = delete;
  EngineCore& operator=(const EngineCore&) = delete;

  // Queues a request (see Scheduler::AddRequest for the errors); NotFound
  // when it names a LoRA adapter this engine does not serve.
  Status AddRequest(proto::EngineCoreRequest request);
  // Aborts requests; unknown ids are ignored.
  void AbortRequests(std::span<const std::string> request_ids) {
    scheduler_->FinishRequests(request_ids, RequestStatus::kFinishedAborted);
    ReleaseUnusedLoras();
  }
  // One step. With no requests it does nothing and returns no outputs. A
  // step with nothing to compute (every request waits for its grammar) skips
  // the executor and waits briefly for a compilation instead.
  // An executor failure is returned as the error; the engine is then unusable.
  StatusOr<std::vector<ClientOutputs>> Step();
  // The same, replacing `*outputs`; pass the same vector every step so its
  // buffers are reused (no per-request allocations in steady decode).
  Status Step(std::vector<ClientOutputs>* outputs);
  // What an engine that went idle without a step owes its frontends
  // (Scheduler::TakeIdleOutputs), stamped with this engine's index.
  void TakeIdleOutputs(std::vector<ClientOutputs>* outputs);
  // True while requests are waiting or running.
  bool HasRequests() const { return scheduler_->HasRequests(); }
  // Drops the prefix cache (false while requests hold blocks); with KV
  // events on, AllBlocksCleared is published at once.
  bool ResetPrefixCache();
  // Sends the KV events of every later step to `publisher` (the engine was
  // built with KVCacheConfig::enable_kv_cache_events).
  void SetKVEventPublisher(std::unique_ptr<KVEventPublisher> publisher) { kv_events_ = std::move(publisher); }
  // Stops the executor. Idempotent.
  void Shutdown();
  // Run-time LoRA adapters (EngineLoras): loaded on the workers at once;
  // unloaded ones stay with the requests that use them.
  Status AddLora(const LoraAdapterInfo& adapter) { return loras_.Add(adapter, *executor_); }
  Status RemoveLora(const std::string& name);
  std::vector<LoraAdapterInfo> ListLoras() const { return loras_.List(); }
  // Time the last Step() spent in the executor (model execution and sampling):
  // wall time, and this thread's CPU time.
  std::chrono::nanoseconds last_execute_time() const { return last_execute_time_; }
  std::chrono::nanoseconds last_execute_cpu_time() const { return last_execute_cpu_time_; }
  // Ok while the executor's workers are alive (an idle engine polls it).
  Status CheckHealth() { return executor_->CheckHealth(); }

  Scheduler& scheduler() { return *scheduler_; }
  // KV blocks the executor allocated (null block included).
  int32_t num_gpu_blocks() const { return num_blocks_; }

 private:
  EngineCore(EngineCoreConfig config, std::unique_ptr<Executor> executor,
             std::unique_ptr<Scheduler> scheduler, int32_t num_blocks,
             std::unique_ptr<StructuredOutputManager> structured_output);

  // Publishes the events the KV cache queued, as one batch (none if empty).
  void PublishKVEvents();

  // Frees unloaded adapters no request uses any more.
  void ReleaseUnusedLoras();

  EngineCoreConfig config_;
  EngineLoras loras_;
  std::unique_ptr<KVEventPublisher> kv_events_;  // null: KV events off
  std::unique_ptr<StructuredOutputManager> structured_output_;  // before scheduler_: outlives it
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Scheduler> scheduler_;
  int32_t num_blocks_;
  bool shut_down_ = false;
  std::chrono::nanoseconds last_execute_time_{0};
  std::chrono::nanoseconds last_execute_cpu_time_{0};
};

}  // namespace llmserve::engine_core
