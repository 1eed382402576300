#pragma once
// What the engine core needs from the workers: size the KV cache, run one
// step, report health, stop. Implementations: in-process (one worker in this
// process) and multi-process (workers behind the shared-memory ring).

#include <cstdint>
#include <string>

#include "engine_core/kv_cache_manager.h"
#include "proto/model_runner_output.h"
#include "proto/scheduler_output.h"
#include "base/status_or.h"

namespace llmserve::engine_core {

class Executor {
 public:
  virtual ~Executor() = default;

  // Allocates the workers' KV cache for `config` (block size, max_model_len);
  // config.num_blocks == 0 means "as many as fit" (at most
  // config.profile_block_cap when that is set). Returns the number of
  // blocks allocated (null block included), the same on every worker.
  virtual StatusOr<int32_t> Initialize(const KVCacheConfig& config) = 0;

  // Runs one scheduled step and returns the sampled tokens. An error means
  // the workers cannot continue (the engine fails the step cleanly).
  virtual StatusOr<proto::ModelRunnerOutput> ExecuteModel(const proto::SchedulerOutput& output) = 0;

  // Ok while every worker is alive and answering.
  virtual Status CheckHealth() = 0;

  // Stops the workers; further calls fail. Idempotent.
  virtual void Shutdown() = 0;

  // Run-time LoRA adapters on every worker (worker::ModelRunner::AddLora /
  // RemoveLora), between steps. Executors without them say so.
  virtual Status AddLora(const std::string& /*name*/, const std::string& /*dir*/) {
    return Status::Unimplemented("this executor cannot load LoRA adapters at run time");
  }
  virtual Status RemoveLora(const std::string& /*name*/) {
    return Status::Unimplemented("this executor cannot unload LoRA adapters at run time");
  }
};

// `profiled` blocks fit in memory: at most config.profile_block_cap of them
// are kept (when set), and the log says which limit decided.
int64_t CapProfiledBlocks(int64_t profiled, const KVCacheConfig& config);

}  // namespace llmserve::engine_core
