#pragma once
// MultiProcExecutor: runs the model in `tensor_parallel_size` llmserve-worker
// processes (vLLM's MultiprocExecutor). Each step's SchedulerOutput goes to
// every worker through one shared-memory broadcast ring; each worker answers
// on its own response ring, and only the output rank answers execute (with a
// KV connector every rank does, and their connector reports are merged). The
// workers die with the engine (PR_SET_PDEATHSIG); a worker that exits or fails
// is detected while the engine waits for its answer, so a step fails cleanly
// instead of hanging.

#include <memory>
#include <string>
#include <vector>

#include "common/ipc/shm_ring.h"
#include "common/process/child_processes.h"
#include "engine_core/executor.h"
#include "engine_core/kv_connector/kv_output_aggregator.h"
#include "proto/engine_config.pb.h"

namespace llmserve::engine_core {

class MultiProcExecutor final : public Executor {
 public:
  // Spawns the workers (`worker_binary`) and connects the rings; the workers
  // load the model in the background (Initialize waits for them).
  static StatusOr<std::unique_ptr<MultiProcExecutor>> Start(const proto::EngineConfig& config,
                                                            const std::string& worker_binary);
  ~MultiProcExecutor() override;

  StatusOr<int32_t> Initialize(const KVCacheConfig& config) override;
  StatusOr<proto::ModelRunnerOutput> ExecuteModel(const proto::SchedulerOutput& output) override;
  Status CheckHealth() override;
  void Shutdown() override;
  // Every worker loads (removes) the adapter; one that fails undoes it on all.
  Status AddLora(const std::string& name, const std::string& dir) override;
  Status RemoveLora(const std::string& name) override;

 private:
  MultiProcExecutor() = default;
  // Broadcasts one command to every worker.
  Status Broadcast(uint8_t command, std::string_view payload);
  // Broadcasts a LoRA command and returns the first worker's failure, if any.
  Status LoraCommand(uint8_t command, const std::string& payload);
  // Waits for worker `rank`'s next answer, watching for dead workers.
  StatusOr<std::string> Receive(uint32_t rank);

  uint32_t world_size_ = 1;
  std::string run_dir_;
  common::ChildProcesses workers_;
  std::unique_ptr<common::ipc::ShmRingWriter> commands_;
  std::vector<std::unique_ptr<common::ipc::ShmRingReader>> responses_;
  proto::wire::Buffer buffer_;
  bool failed_ = false;
  bool shut_down_ = false;
  std::unique_ptr<KVOutputAggregator> kv_reports_;  // with a KV connector: every rank answers execute
};

}  // namespace llmserve::engine_core
