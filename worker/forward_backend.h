#pragma once
// The device half of a ModelRunner: the forward pass over one flattened
// batch on a paged KV cache the backend owns. CpuBackend runs Model in host
// memory; the CUDA backend (worker/cuda/) runs on a GPU. The runner keeps
// request state and samples; a backend only turns batches into logits.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "base/status_or.h"
#include "worker/forward_batch.h"
#include "worker/model_config.h"

namespace llmserve::worker {

// What ProfileKvCache measured and decided.
struct KvCacheBudget {
  size_t num_blocks = 0;             // KV blocks that fit
  size_t bytes_per_block = 0;        // across layers, K and V
  size_t weight_bytes = 0;           // matmul weights held
  size_t activation_peak_bytes = 0;  // measured by the dummy forward
  size_t budget_bytes = 0;           // memory the blocks were fitted into
};

// One sampled row's sampling parameters, for a backend that can sample on
// its device: set where the row needs nothing the device sampler lacks
// (logits processing, a grammar mask, logprobs).
struct DeviceSampling {
  bool on_device = false;
  float temperature = 1.f;  // ≤ 1e-5: greedy
  int32_t top_k = 0;
  float top_p = 1.f;
  float min_p = 0.f;
  double uniform = 0;  // the row's draw (Sampler::Uniform)
};

// What a forward pass returns.
struct ForwardOutput {
  // One per logits row where the device sampled: the token, or -1 where it
  // did not. Empty: no row was sampled on the device.
  std::vector<int32_t> sampled;
  // The other rows' logits, in row order: [rows × vocab_size] in host memory
  // the backend owns (pinned on a GPU), valid until the next call.
  const float* logits = nullptr;
  int32_t device_nans = 0;  // NaNs in the logits of the rows sampled on the device
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
  // Whether Forward samples the rows DeviceSampling marks.
  virtual bool samples_on_device() const { return false; }
  // Runs the batch: writes its K/V into the cache, samples the rows
  // `sampling` (empty, or one per logits row) marks, and returns the rest's
  // logits.
  virtual StatusOr<ForwardOutput> Forward(const ForwardBatch& batch, const std::vector<DeviceSampling>& sampling) = 0;
  // The pooling runner's forward: writes the batch's K/V and returns the
  // final-normed hidden states of its logits rows [rows × hidden_size] in
  // host memory the backend owns, valid until the next call.
  virtual StatusOr<const float*> ForwardHidden(const ForwardBatch& /*batch*/) {
    return Status::Unimplemented("the pooling runner (--runner pooling) runs on the CPU only (--device cpu)");
  }
};

}  // namespace llmserve::worker
