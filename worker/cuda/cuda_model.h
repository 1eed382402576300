#pragma once
// A decoder-only transformer (Llama / Mistral / Qwen2 / Qwen3) on one CUDA
// device: bf16 weights and KV cache, fp32 residual stream, cuBLASLt matmuls
// with the residual adds fused in, and the kernels of kernels/cuda between
// them. One stream; Forward returns once the logits are on the host.

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "base/status_or.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/gemm_bf16.h"
#include "worker/cuda/cuda_weights.h"
#include "worker/forward_batch.h"
#include "worker/model_config.h"

namespace llmserve::worker::cuda {

class CudaModel {
 public:
  // Takes the weights (already on the current device). `block_size`: tokens per KV block.
  static StatusOr<std::unique_ptr<CudaModel>> Create(const ModelConfig& config, CudaWeights weights,
                                                     size_t block_size);
  ~CudaModel();
  CudaModel(const CudaModel&) = delete;
  CudaModel& operator=(const CudaModel&) = delete;

  // (Re)allocates the KV cache with `num_blocks` blocks, zeroed.
  Status AllocateKvCache(size_t num_blocks);
  void FreeKvCache();
  size_t kv_num_blocks() const { return num_blocks_; }
  // Bytes one KV block takes across layers, K and V.
  size_t kv_bytes_per_block() const;

  // Runs the batch and copies [logits_indices.size() × vocab] fp32 logits to
  // the host. The KV cache must be allocated.
  Status Forward(const ForwardBatch& batch, std::vector<float>* logits);

  const ModelConfig& config() const { return config_; }
  const CudaWeights& weights() const { return weights_; }
  // Device bytes of activation buffers (their high-water mark).
  size_t activation_bytes() const;

 private:
  CudaModel() = default;
  // Grows the activation buffers for `tokens` rows, `logit_rows` sampled rows
  // and `attention_scratch` split-K floats.
  Status Reserve(size_t tokens, size_t logit_rows, size_t attention_scratch);
  // Copies the batch's index arrays to the device in one transfer.
  Status UploadBatch(const ForwardBatch& batch);
  Status Layer(size_t index, const ForwardBatch& batch, size_t attention_splits);

  ModelConfig config_;
  CudaWeights weights_;
  size_t block_size_ = 0, num_blocks_ = 0, num_sms_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<kernels::cuda::Bf16Gemm> gemm_;
  DeviceArray<float> rope_cos_, rope_sin_;  // [max_position_embeddings × head_dim / 2]
  std::vector<DeviceArray<Bf16>> k_cache_, v_cache_;  // per layer

  // The batch's index arrays: one device block, one pinned host staging block.
  DeviceArray<int32_t> batch_meta_;
  int32_t* staging_ = nullptr;
  size_t staging_ints_ = 0;
  const int32_t *token_ids_ = nullptr, *positions_ = nullptr, *token_request_ = nullptr, *block_tables_ = nullptr,
                *logits_indices_ = nullptr;
  const int64_t* slot_mapping_ = nullptr;

  // Activations.
  DeviceArray<float> hidden_, qkv_, gate_up_, logits_, attention_scratch_;
  DeviceArray<Bf16> normed_, attn_, act_;
};

}  // namespace llmserve::worker::cuda
