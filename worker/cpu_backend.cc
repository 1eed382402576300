#include "worker/cpu_backend.h"

#include <glog/logging.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <new>
#include <string>

#include "common/process/memory_shares.h"

namespace llmserve::worker {

size_t AvailableMemoryBytes() {
  size_t bytes = static_cast<size_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::ifstream cg("/sys/fs/cgroup/memory.max");
  std::string limit;
  if (cg >> limit && limit != "max") {
    try {
      bytes = std::min<size_t>(bytes, std::stoull(limit));
    } catch (const std::exception&) {
    }
  }
  return bytes;
}

StatusOr<KvCacheBudget> CpuBackend::ProfileKvCache(const ForwardBatch& dummy) {
  KvCache scratch(model_->CacheShape(1, options_.block_size, options_.kv_cache_dtype));
  scratch.Commit(*pool_);
  std::vector<float> logits;
  LLMSERVE_RETURN_IF_ERROR(model_->Forward(dummy, scratch, &logits));
  KvCacheBudget budget;
  budget.bytes_per_block = model_->CacheShape(1, options_.block_size, options_.kv_cache_dtype).bytes_per_block();
  budget.weight_bytes = model_->weights().matmul_bytes();
  budget.activation_peak_bytes = model_->peak_activation_bytes() + logits.capacity() * sizeof(float);
  if (options_.kv_cache_memory_bytes > 0) {
    budget.budget_bytes = options_.kv_cache_memory_bytes;
  } else {
    const size_t ram = AvailableMemoryBytes();
    const size_t engines = common::CountMemoryShares();
    const double total = static_cast<double>(ram) * options_.memory_fraction / static_cast<double>(engines);
    const double used = static_cast<double>(budget.weight_bytes + budget.activation_peak_bytes);
    budget.budget_bytes = total > used ? static_cast<size_t>(total - used) : 0;
    LOG(INFO) << "KV cache memory: " << options_.memory_fraction << " of " << (ram >> 20) << " MiB RAM"
              << (engines > 1 ? " split among " + std::to_string(engines) + " engines on this host" : std::string())
              << ", less " << (budget.weight_bytes >> 20) << " MiB of weights and "
              << (budget.activation_peak_bytes >> 20) << " MiB of activations: " << (budget.budget_bytes >> 20)
              << " MiB";
  }
  budget.num_blocks = budget.budget_bytes / budget.bytes_per_block;
  return budget;
}

Status CpuBackend::InitializeKvCache(size_t num_blocks) {
  const KvCacheShape shape = model_->CacheShape(num_blocks, options_.block_size, options_.kv_cache_dtype);
  if (num_blocks > (size_t{1} << 48) / shape.bytes_per_block()) {
    return Status::ResourceExhausted("a KV cache of " + std::to_string(num_blocks) + " blocks exceeds 256 TiB");
  }
  size_t scaled = 0;
  for (const LayerWeights& l : model_->weights().layers) scaled += l.has_kv_scales ? 1 : 0;
  if (!kernels::cpu::IsFp8(shape.dtype) && scaled > 0) {
    LOG(INFO) << "the checkpoint has fp8 KV cache scales (k_scale / v_scale); they apply with --kv-cache-dtype fp8";
  } else if (kernels::cpu::IsFp8(shape.dtype)) {
    if (scaled == 0) {
      LOG(WARNING) << "fp8 KV cache without k_scale / v_scale in the checkpoint: K and V are stored unscaled "
                      "(scale 1.0), which may cost accuracy";
    } else {
      LOG(INFO) << "fp8 KV cache: the checkpoint's k_scale / v_scale for " << scaled << " of "
                << model_->weights().layers.size() << " layers (1.0 for the rest)";
    }
  }
  try {
    cache_ = std::make_unique<KvCache>(shape);
    LOG(INFO) << "KV cache: committing " << (cache_->bytes() >> 20) << " MiB";
    const auto start = std::chrono::steady_clock::now();
    cache_->Commit(*pool_);
    LOG(INFO) << "KV cache: " << (cache_->bytes() >> 20) << " MiB committed in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count()
              << " ms";
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("cannot allocate a KV cache of " + std::to_string(num_blocks) + " blocks (" +
                                     std::to_string(shape.bytes_per_block() * num_blocks) + " bytes)");
  }
  // Loading and repacking the weights left freed heap pages behind: give them back.
  malloc_trim(0);
  return Status::Ok();
}

StatusOr<ForwardOutput> CpuBackend::Forward(const ForwardBatch& batch, const std::vector<DeviceSampling>&) {
  LLMSERVE_RETURN_IF_ERROR(model_->Forward(batch, *cache_, &logits_));
  ForwardOutput out;
  out.logits = logits_.data();
  return out;
}

StatusOr<const float*> CpuBackend::ForwardHidden(const ForwardBatch& batch) {
  LLMSERVE_RETURN_IF_ERROR(model_->ForwardHidden(batch, *cache_, &hidden_));
  return static_cast<const float*>(hidden_.data());
}

}  // namespace llmserve::worker
