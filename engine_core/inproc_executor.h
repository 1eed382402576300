#pragma once
// InProcExecutor: runs the model in the engine's own process (one worker, no
// tensor parallelism). Used by the offline LLM class and by engines started
// with --tensor-parallel-size 1; the multi-process executor runs workers
// behind the shared-memory ring instead.

#include <memory>
#include <string>

#include "engine_core/executor.h"
#include "worker/model_runner.h"

namespace llmserve::engine_core {

class InProcExecutor final : public Executor {
 public:
  explicit InProcExecutor(std::unique_ptr<worker::ModelRunner> runner) : runner_(std::move(runner)) {}

  // Profiles the KV budget when config.num_blocks is 0, then allocates.
  StatusOr<int32_t> Initialize(const KVCacheConfig& config) override;
  StatusOr<proto::ModelRunnerOutput> ExecuteModel(const proto::SchedulerOutput& output) override;
  Status CheckHealth() override { return runner_ ? Status::Ok() : Status::Unavailable("executor shut down"); }
  void Shutdown() override { runner_.reset(); }
  Status AddLora(const std::string& name, const std::string& dir) override {
    return runner_ ? runner_->AddLora(name, dir) : Status::Unavailable("executor shut down");
  }
  Status RemoveLora(const std::string& name) override {
    return runner_ ? runner_->RemoveLora(name) : Status::Unavailable("executor shut down");
  }

 private:
  std::unique_ptr<worker::ModelRunner> runner_;
};

}  // namespace llmserve::engine_core
