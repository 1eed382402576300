#pragma once
// ForwardBackend on the CPU: Model over a KvCache in host memory, whose size
// is a share of RAM (or an explicit byte count).

#include <memory>

#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/thread_pool.h"
#include "worker/forward_backend.h"
#include "worker/kv_cache.h"
#include "worker/model.h"

namespace llmserve::worker {

struct CpuBackendOptions {
  size_t block_size = kDefaultCpuBlockSize;
  kernels::cpu::KvDType kv_cache_dtype = kernels::cpu::KvDType::kF32;
  size_t kv_cache_memory_bytes = 0;  // > 0: the KV cache gets exactly this much
  double memory_fraction = 0.5;      // else: this share of RAM for weights + activations + KV
};

class CpuBackend : public ForwardBackend {
 public:
  // `pool` must outlive the backend.
  CpuBackend(std::unique_ptr<Model> model, const CpuBackendOptions& options, kernels::cpu::ThreadPool* pool)
      : model_(std::move(model)), options_(options), pool_(pool) {}

  const ModelConfig& config() const override { return model_->config(); }
  StatusOr<KvCacheBudget> ProfileKvCache(const ForwardBatch& dummy) override;
  Status InitializeKvCache(size_t num_blocks) override;
  bool kv_cache_ready() const override { return cache_ != nullptr; }
  // Samples nothing itself: every row's logits come back.
  StatusOr<ForwardOutput> Forward(const ForwardBatch& batch, const std::vector<DeviceSampling>& sampling) override;
  StatusOr<const float*> ForwardHidden(const ForwardBatch& batch) override;

  Model& model() { return *model_; }
  // The KV cache (null before InitializeKvCache).
  KvCache* kv_cache() { return cache_.get(); }

 private:
  std::unique_ptr<Model> model_;
  CpuBackendOptions options_;
  kernels::cpu::ThreadPool* pool_;
  std::unique_ptr<KvCache> cache_;
  std::vector<float> logits_;
  std::vector<float> hidden_;  // ForwardHidden's rows
};

// Physical memory available to this process: RAM, capped by a cgroup limit.
size_t AvailableMemoryBytes();

}  // namespace llmserve::worker
