// The CUDA ForwardBackend: CudaModel on device 0, its KV cache sized the way
// vLLM sizes it: gpu_memory_utilization × the device's memory, less what is
// in use after the weights are loaded and the profile batch has run.
#include "worker/cuda_backend.h"

#include <glog/logging.h>

#include <vector>

#include "common/gguf/model_path.h"
#include "kernels/cuda/cuda_check.h"
#include "worker/cuda/cuda_model.h"

namespace llmserve::worker {

namespace {

class CudaBackend : public ForwardBackend {
 public:
  CudaBackend(std::unique_ptr<cuda::CudaModel> model, const ModelRunnerConfig& config)
      : model_(std::move(model)), config_(config) {}

  const ModelConfig& config() const override { return model_->config(); }

  StatusOr<KvCacheBudget> ProfileKvCache(const ForwardBatch& dummy) override {
    LLMSERVE_RETURN_IF_ERROR(model_->AllocateKvCache(1));
    std::vector<float> logits;
    LLMSERVE_RETURN_IF_ERROR(model_->Forward(dummy, &logits));
    size_t free = 0, total = 0;
    LLMSERVE_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free, &total));
    KvCacheBudget budget;
    budget.bytes_per_block = model_->kv_bytes_per_block();
    budget.weight_bytes = model_->weights().bytes();
    budget.activation_peak_bytes = model_->activation_bytes();
    // The scratch block is freed before the real cache is allocated.
    const size_t used = total - free - budget.bytes_per_block;
    model_->FreeKvCache();
    if (config_.kv_cache_memory_bytes > 0) {
      budget.budget_bytes = config_.kv_cache_memory_bytes;
    } else {
      const double allowed = static_cast<double>(total) * config_.memory_fraction;
      budget.budget_bytes =
          allowed > static_cast<double>(used) ? static_cast<size_t>(allowed - static_cast<double>(used)) : 0;
    }
    budget.num_blocks = budget.budget_bytes / budget.bytes_per_block;
    LOG(INFO) << "GPU memory: " << (total >> 20) << " MiB, in use after profiling " << (used >> 20) << " MiB (weights "
              << (budget.weight_bytes >> 20) << " MiB, activations " << (budget.activation_peak_bytes >> 20)
              << " MiB); KV cache " << (budget.budget_bytes >> 20) << " MiB = " << budget.num_blocks << " blocks";
    return budget;
  }

  Status InitializeKvCache(size_t num_blocks) override { return model_->AllocateKvCache(num_blocks); }
  bool kv_cache_ready() const override { return model_->kv_num_blocks() > 0; }
  bool samples_on_device() const override { return true; }
  StatusOr<ForwardOutput> Forward(const ForwardBatch& batch, const std::vector<DeviceSampling>& sampling) override {
    return model_->Forward(batch, sampling);
  }

 private:
  std::unique_ptr<cuda::CudaModel> model_;
  ModelRunnerConfig config_;
};

// vLLM's default cudagraph_capture_sizes: 1, 2, 4, then every 8 to 256 and
// every 16 to 512, up to the first size that holds max_num_seqs.
std::vector<size_t> DefaultCaptureSizes(size_t max_num_seqs) {
  std::vector<size_t> sizes = {1, 2, 4};
  for (size_t s = 8; s <= 256; s += 8) sizes.push_back(s);
  for (size_t s = 272; s <= 512; s += 16) sizes.push_back(s);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] >= max_num_seqs) {
      sizes.resize(i + 1);
      break;
    }
  }
  return sizes;
}

}  // namespace

bool CudaBackendAvailable() { return kernels::cuda::CudaDeviceCount() > 0; }

StatusOr<std::unique_ptr<ForwardBackend>> CreateCudaBackend(const ModelRunnerConfig& config) {
  if (kernels::cuda::CudaDeviceCount() == 0)
    return Status::Unavailable(
        "--device cuda: no CUDA device is visible (driver missing or CUDA_VISIBLE_DEVICES empty)");
  if (config.tp_size > 1)
    return Status::Unimplemented("--device cuda: tensor parallelism on the GPU is not built yet (use TP 1)");
  if (config.precision != kernels::cpu::MatmulPrecision::kBF16)
    return Status::InvalidArgument("--device cuda computes in bfloat16: use --dtype auto or bfloat16");
  if (config.kv_cache_dtype != kernels::cpu::KvDType::kBF16)
    return Status::InvalidArgument(
        "--device cuda keeps the KV cache in bfloat16: use --kv-cache-dtype auto or bfloat16");
  LLMSERVE_ASSIGN_OR_RETURN(const std::string gguf, common::gguf::GgufModelFile(config.model_dir));
  if (!gguf.empty())
    return Status::Unimplemented("--device cuda loads safetensors checkpoints; " + gguf +
                                 " is a GGUF file, which runs on --device cpu");
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
  LLMSERVE_ASSIGN_OR_RETURN(ModelConfig model_config, LoadModelConfig(config.model_dir));
  LLMSERVE_ASSIGN_OR_RETURN(cuda::CudaWeights weights,
                            config.dummy_weights
                                ? cuda::RandomCudaWeights(model_config, config.process_seed)
                                : cuda::LoadCudaWeights(config.model_dir, model_config, config.show_progress));
  if (config.dummy_weights) LOG(WARNING) << "--load-format dummy: random weights, the model's outputs mean nothing";
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaModel> model,
                            cuda::CudaModel::Create(model_config, std::move(weights), config.block_size));
  if (!config.enforce_eager) model->SetCudaGraphSizes(DefaultCaptureSizes(config.max_num_seqs));
  return std::unique_ptr<ForwardBackend>(new CudaBackend(std::move(model), config));
}

}  // namespace llmserve::worker
