#include "engine_core/engine_core.h"

#include <glog/logging.h>

#include "base/wall_clock.h"
#include "engine_core/kv_connector/kv_connector_factory.h"
#include "engine_core/step_overhead.h"

namespace llmserve::engine_core {

StatusOr<std::unique_ptr<EngineCore>> EngineCore::Create(
    EngineCoreConfig config, std::unique_ptr<Executor> executor,
    std::unique_ptr<StructuredOutputManager> structured_output) {
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
  auto connector = CreateKVConnectorScheduler(config.kv_transfer, config.kv.block_size, config.tensor_parallel_size);
  if (!connector.ok()) {
    executor->Shutdown();
    return connector.status();
  }
  if (*connector != nullptr)
    (*scheduler)->SetKVConnector(std::move(connector).value(), config.kv_transfer.kv_load_failure_policy);
  LOG(INFO) << "engine " << config.engine_index << ": " << *blocks << " KV blocks of "
            << config.kv.block_size << " tokens, prefix caching "
            << (config.kv.enable_prefix_caching ? "on" : "off");
  const int32_t n = *blocks;
  return std::unique_ptr<EngineCore>(new EngineCore(std::move(config), std::move(executor),
                                                    std::move(scheduler).value(), n, std::move(structured_output)));
}

EngineCore::EngineCore(EngineCoreConfig config, std::unique_ptr<Executor> executor,
                       std::unique_ptr<Scheduler> scheduler, int32_t num_blocks,
                       std::unique_ptr<StructuredOutputManager> structured_output)
    : config_(std::move(config)),
      structured_output_(std::move(structured_output)),
      executor_(std::move(executor)),
      scheduler_(std::move(scheduler)),
      num_blocks_(num_blocks) {
  scheduler_->SetStructuredOutputManager(structured_output_.get());
  for (const auto& m : config_.lora_modules) loras_.AddStartup(m);
}

Status EngineCore::AddRequest(proto::EngineCoreRequest request) {
  if (request.lora_name.has_value() && !request.lora_name->empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(std::string key, loras_.KeyFor(*request.lora_name));
    request.lora_name = std::move(key);
  }
  return scheduler_->AddRequest(std::move(request));
}

Status EngineCore::RemoveLora(const std::string& name) {
  LLMSERVE_RETURN_IF_ERROR(loras_.Remove(name));
  ReleaseUnusedLoras();
  return Status::Ok();
}

void EngineCore::ReleaseUnusedLoras() {
  if (!loras_.has_unreleased() || shut_down_) return;
  loras_.ReleaseUnused([this](const std::string& key) { return scheduler_->UsesLora(key); }, *executor_);
}

EngineCore::~EngineCore() { Shutdown(); }

StatusOr<std::vector<ClientOutputs>> EngineCore::Step() {
  std::vector<ClientOutputs> outputs;
  LLMSERVE_RETURN_IF_ERROR(Step(&outputs));
  return outputs;
}

void EngineCore::TakeIdleOutputs(std::vector<ClientOutputs>* outputs) {
  scheduler_->TakeIdleOutputs(outputs);
  for (ClientOutputs& o : *outputs) o.outputs.engine_index = config_.engine_index;
}

Status EngineCore::Step(std::vector<ClientOutputs>* outputs) {
  if (shut_down_) return Status::Unavailable("the engine core is shut down");
  if (!scheduler_->HasRequests()) {
    outputs->clear();
    return Status::Ok();
  }
  const proto::SchedulerOutput& so = scheduler_->Schedule();
  if (so.total_num_scheduled_tokens == 0 && so.finished_req_ids.empty() && scheduler_->HasGrammarsCompiling()) {
    // Nothing for the workers: report grammar failures, then let a compilation finish.
    scheduler_->UpdateFromOutput(so, proto::ModelRunnerOutput{}, outputs);
    for (ClientOutputs& o : *outputs) o.outputs.engine_index = config_.engine_index;
    PublishKVEvents();
    last_execute_time_ = last_execute_cpu_time_ = std::chrono::nanoseconds(0);
    structured_output_->WaitForCompiled(std::chrono::milliseconds(5));
    return Status::Ok();
  }
  const auto execute_start = std::chrono::steady_clock::now();
  const auto execute_cpu_start = ThreadCpuTime();
  auto mro = executor_->ExecuteModel(so);
  last_execute_cpu_time_ = ThreadCpuTime() - execute_cpu_start;
  last_execute_time_ = std::chrono::steady_clock::now() - execute_start;
  if (!mro.ok()) return mro.status().WithContext("executing the model");
  if (mro->error) return Status::Internal("worker failed: " + *mro->error);
  scheduler_->UpdateFromOutput(so, *mro, outputs);
  for (ClientOutputs& o : *outputs) o.outputs.engine_index = config_.engine_index;
  PublishKVEvents();
  ReleaseUnusedLoras();
  return Status::Ok();
}

bool EngineCore::ResetPrefixCache() {
  const bool reset = scheduler_->ResetPrefixCache();
  // vLLM publishes only after a step; an idle engine would hold the event back.
  PublishKVEvents();
  return reset;
}

void EngineCore::PublishKVEvents() {
  // Taken even without a publisher, so a queue that nobody reads cannot grow.
  std::vector<proto::KVCacheEvent> events = scheduler_->TakeKVEvents();
  if (events.empty() || kv_events_ == nullptr) return;
  const double now = base::EpochSeconds();
  kv_events_->Publish(proto::KVEventBatch{now, std::move(events), std::nullopt});
}

void EngineCore::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  executor_->Shutdown();
}

}  // namespace llmserve::engine_core
