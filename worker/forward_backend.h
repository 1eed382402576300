#pragma once
// The device half of a ModelRunner: the forward pass over one flattened
// batch on a paged KV cache the backend owns. CpuBackend runs Model in host
// memory; the CUDA backend (worker/cuda/) runs on a GPU. The runner keeps
// request state and samples; a backend only turns batches into logits.

#include <cstddef>
#include <vector>

#include "base/status_or.h"
#include "worker/forward_batch.h"
#include "worker/model_config.h"

namespace llmserve::worker {

// What ProfileKvCache measured and decided.
struct KvCacheBudget {
  size_t num_blocks = 0;               // KV blocks that fit
  size_t bytes_per_block = 0;          // across layers, K and V
  size_t weight_bytes = 0;             // matmul weights held
  size_t activation_peak_bytes = 0;    // measured by the dummy forward
  size_t budget_bytes = 0;             // memory the blocks were fitted into
};

class ForwardBackend {
 public:
  virtual ~ForwardBackend() = default;

  virtual const ModelConfig& config() const = 0;
  // Runs `dummy` (every slot -1, every block table entry 0: it needs one
  // scratch block and writes no K/V), measures the activation peak and fits
  // KV blocks into the backend's memory budget.
  virtual StatusOr<KvCacheBudget> ProfileKvCache(const ForwardBatch& dummy) = 0;
  // Allocates the KV cache. Must precede Forward.
  virtual Status InitializeKvCache(size_t num_blocks) = 0;
  virtual bool kv_cache_ready() const = 0;
  // Runs the batch: writes its K/V into the cache and fills `logits` (host
  // memory) with [batch.logits_indices.size() × vocab_size] rows.
  virtual Status Forward(const ForwardBatch& batch, std::vector<float>* logits) = 0;
};

}  // namespace llmserve::worker
