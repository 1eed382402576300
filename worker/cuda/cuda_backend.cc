// The CUDA ForwardBackend: CudaModel on device 0, its KV cache sized the way
// vLLM sizes it: gpu_memory_utilization × the device's memory, less what is
// in use after the weights are loaded and the profile batch has run.
#include "worker/cuda_backend.h"

#include <glog/logging.h>

#include <vector>

#include "common/gguf/model_path.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/nccl_communicator.h"
#include "worker/cuda/cuda_model.h"

namespace llmserve::worker {

namespace {

class CudaBackend : public ForwardBackend {
 public:
  CudaBackend(std::unique_ptr<kernels::cuda::NcclCommunicator> nccl, std::unique_ptr<cuda::CudaModel> model,
              const ModelRunnerConfig& config)
      : nccl_(std::move(nccl)), model_(std::move(model)), config_(config) {
    model_->SetCommunicator(nccl_.get());
  }

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
  std::unique_ptr<kernels::cuda::NcclCommunicator> nccl_;  // tensor parallelism only; outlives model_
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

// The NCCL group of the tensor-parallel ranks: rank 0 makes its id and the
// host communicator carries it to the others, as 128 floats of byte values
// and a last one that says whether rank 0 could make it (so that a rank 0
// without NCCL fails every rank at once, not after a timeout).
StatusOr<std::unique_ptr<kernels::cuda::NcclCommunicator>> JoinNcclGroup(common::ipc::Communicator& comm) {
  using kernels::cuda::NcclId;
  StatusOr<NcclId> made = comm.rank() == 0 ? kernels::cuda::NcclCommunicator::NewId() : StatusOr<NcclId>(NcclId());
  NcclId id = made.ok() ? *made : NcclId();
  const size_t n = id.bytes.size() + 1;
  std::vector<float> mine(n), all(n * static_cast<size_t>(comm.world_size()));
  for (size_t i = 0; i < id.bytes.size(); ++i) mine[i] = static_cast<float>(static_cast<unsigned char>(id.bytes[i]));
  mine[n - 1] = made.ok() ? 1.f : 0.f;
  LLMSERVE_RETURN_IF_ERROR(comm.AllGather(mine.data(), n, all.data()));
  if (!made.ok()) return made.status();
  if (all[n - 1] != 1.f) return Status::Unavailable("tensor-parallel rank 0 could not set up NCCL (its log says why)");
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = static_cast<char>(static_cast<unsigned char>(all[i]));
  return kernels::cuda::NcclCommunicator::Create(comm.rank(), comm.world_size(), id);
}

}  // namespace

bool CudaBackendAvailable() { return kernels::cuda::CudaDeviceCount() > 0; }

StatusOr<std::unique_ptr<ForwardBackend>> CreateCudaBackend(const ModelRunnerConfig& config,
                                                            common::ipc::Communicator* comm) {
  const size_t devices = kernels::cuda::CudaDeviceCount();
  if (devices == 0)
    return Status::Unavailable(
        "--device cuda: no CUDA device is visible (driver missing or CUDA_VISIBLE_DEVICES empty)");
  if (config.tp_size > devices)
    return Status::InvalidArgument("--device cuda at tensor-parallel size " + std::to_string(config.tp_size) +
                                   " takes one GPU per rank; " + std::to_string(devices) + " are visible");
  if (config.tp_size > 1 && (comm == nullptr || static_cast<size_t>(comm->world_size()) != config.tp_size))
    return Status::Internal("tensor parallelism on the GPU needs the ranks' host communicator");
  if (config.precision != kernels::cpu::MatmulPrecision::kBF16)
    return Status::InvalidArgument("--device cuda computes in bfloat16: use --dtype auto or bfloat16");
  if (config.kv_cache_dtype != kernels::cpu::KvDType::kBF16)
    return Status::InvalidArgument(
        "--device cuda keeps the KV cache in bfloat16: use --kv-cache-dtype auto or bfloat16");
  LLMSERVE_ASSIGN_OR_RETURN(const std::string gguf, common::gguf::GgufModelFile(config.model_dir));
  if (!gguf.empty())
    return Status::Unimplemented("--device cuda loads safetensors checkpoints; " + gguf +
                                 " is a GGUF file, which runs on --device cpu");
  LLMSERVE_CUDA_RETURN_IF_ERROR(cudaSetDevice(static_cast<int>(config.tp_rank)));
  LLMSERVE_ASSIGN_OR_RETURN(const ModelConfig whole, LoadModelConfig(config.model_dir));
  LLMSERVE_ASSIGN_OR_RETURN(const ModelConfig local, cuda::TpLocalConfig(whole, config.tp_size));
  const cuda::TpShard shard{config.tp_rank, config.tp_size};
  LLMSERVE_ASSIGN_OR_RETURN(cuda::CudaWeights weights,
                            config.dummy_weights
                                ? cuda::RandomCudaWeights(whole, config.process_seed, shard)
                                : cuda::LoadCudaWeights(config.model_dir, whole, config.show_progress, shard));
  if (config.dummy_weights) LOG(WARNING) << "--load-format dummy: random weights, the model's outputs mean nothing";
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaModel> model,
                            cuda::CudaModel::Create(local, std::move(weights), config.block_size));
  if (!config.enforce_eager) model->SetCudaGraphSizes(DefaultCaptureSizes(config.max_num_seqs));
  std::unique_ptr<kernels::cuda::NcclCommunicator> nccl;
  if (config.tp_size > 1) {
    LLMSERVE_ASSIGN_OR_RETURN(nccl, JoinNcclGroup(*comm));
  }
  return std::unique_ptr<ForwardBackend>(new CudaBackend(std::move(nccl), std::move(model), config));
}

}  // namespace llmserve::worker
