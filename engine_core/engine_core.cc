#include "engine_core/engine_core.h"

#include <glog/logging.h>

#include "engine_core/step_overhead.h"

namespace llmserve::engine_core {

StatusOr<std::unique_ptr<EngineCore>> EngineCore::Create(EngineCoreConfig config,
                                                         std::unique_ptr<Executor> executor) {
  if (executor == nullptr) return Status::InvalidArgument("EngineCore needs an executor");
  config.kv.max_model_len = config.scheduler.max_model_len;
  auto blocks = executor->Initialize(config.kv);
  if (!blocks.ok()) return blocks.status().WithContext("initializing the KV cache");
  config.kv.num_blocks = *blocks;
  auto scheduler = Scheduler::Create(config.scheduler, config.kv);
  if (!scheduler.ok()) {
    executor->Shutdown();
    return scheduler.status();
  }
  LOG(INFO) << "engine " << config.engine_index << ": " << *blocks << " KV blocks of "
            << config.kv.block_size << " tokens, prefix caching "
            << (config.kv.enable_prefix_caching ? "on" : "off");
  const int32_t n = *blocks;
  return std::unique_ptr<EngineCore>(
      new EngineCore(std::move(config), std::move(executor), std::move(scheduler).value(), n));
}

EngineCore::EngineCore(EngineCoreConfig config, std::unique_ptr<Executor> executor,
                       std::unique_ptr<Scheduler> scheduler, int32_t num_blocks)
    : config_(std::move(config)),
      executor_(std::move(executor)),
      scheduler_(std::move(scheduler)),
      num_blocks_(num_blocks) {}

EngineCore::~EngineCore() { Shutdown(); }

StatusOr<std::vector<ClientOutputs>> EngineCore::Step() {
  std::vector<ClientOutputs> outputs;
  LLMSERVE_RETURN_IF_ERROR(Step(&outputs));
  return outputs;
}

Status EngineCore::Step(std::vector<ClientOutputs>* outputs) {
  if (shut_down_) return Status::Unavailable("the engine core is shut down");
  if (!scheduler_->HasRequests()) {
    outputs->clear();
    return Status::Ok();
  }
  const proto::SchedulerOutput& so = scheduler_->Schedule();
  const auto execute_start = std::chrono::steady_clock::now();
  const auto execute_cpu_start = ThreadCpuTime();
  auto mro = executor_->ExecuteModel(so);
  last_execute_cpu_time_ = ThreadCpuTime() - execute_cpu_start;
  last_execute_time_ = std::chrono::steady_clock::now() - execute_start;
  if (!mro.ok()) return mro.status().WithContext("executing the model");
  if (mro->error) return Status::Internal("worker failed: " + *mro->error);
  scheduler_->UpdateFromOutput(so, *mro, outputs);
  for (ClientOutputs& o : *outputs) o.outputs.engine_index = config_.engine_index;
  return Status::Ok();
}

void EngineCore::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  executor_->Shutdown();
}

}  // namespace llmserve::engine_core
