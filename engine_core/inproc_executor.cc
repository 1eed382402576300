#include "engine_core/inproc_executor.h"

#include <glog/logging.h>

namespace llmserve::engine_core {

StatusOr<int32_t> InProcExecutor::Initialize(const KVCacheConfig& config) {
  if (!runner_) return Status::Unavailable("executor shut down");
  size_t num_blocks = static_cast<size_t>(config.num_blocks);
  if (num_blocks == 0) {
    LLMSERVE_ASSIGN_OR_RETURN(worker::KvCacheBudget budget, runner_->ProfileKvCache());
    num_blocks = CapProfiledBlocks(budget.num_blocks, config);
    LOG(INFO) << "KV cache: " << num_blocks << " blocks of " << runner_->config().block_size << " tokens ("
              << budget.bytes_per_block * num_blocks / (1 << 20) << " MiB); weights "
              << budget.weight_bytes / (1 << 20) << " MiB, activation peak " << budget.activation_peak_bytes / (1 << 20)
              << " MiB";
  }
  if (num_blocks < 2) return Status::ResourceExhausted("no memory left for the KV cache (fewer than 2 blocks fit)");
  LLMSERVE_RETURN_IF_ERROR(runner_->InitializeKvCache(num_blocks));
  return static_cast<int32_t>(num_blocks);
}

StatusOr<proto::ModelRunnerOutput> InProcExecutor::ExecuteModel(const proto::SchedulerOutput& output) {
  if (!runner_) return Status::Unavailable("executor shut down");
  proto::ModelRunnerOutput result = runner_->Execute(output);
  if (result.error) return Status::Internal("model execution failed: " + *result.error);
  return result;
}

}  // namespace llmserve::engine_core
