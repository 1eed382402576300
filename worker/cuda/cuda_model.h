#pragma once
// A decoder-only transformer (Llama / Mistral / Qwen2 / Qwen3) on one CUDA
// device: bf16 weights and KV cache, fp32 residual stream, cuBLASLt matmuls
// with the residual adds fused in, and the kernels of kernels/cuda between
// them. One stream; Forward returns once the logits are on the host.
//
// CUDA graphs (vLLM's cudagraph_capture_sizes): a step of single-token
// decodes is padded to the next capture size and replayed from a graph
// captured on its first use, so one launch replaces the step's hundreds.
// Graphs are keyed by (size, block-table width rounded up to a power of
// two) and dropped when a buffer they point into is reallocated.
//
// Tensor parallelism: the model is one rank's share (TpLocalConfig,
// TpShard); with a communicator, the o and down projections' outputs are
// summed over the ranks into the residual stream, which rank 0 alone adds
// (with o's bias), so every rank holds the same hidden states after each.

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "base/status_or.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/gemm_bf16.h"
#include "kernels/cuda/nccl_communicator.h"
#include "kernels/cuda/sampling.h"
#include "worker/cuda/cuda_weights.h"
#include "worker/forward_backend.h"
#include "worker/forward_batch.h"
#include "worker/model_config.h"

namespace llmserve::worker::cuda {

class CudaModel {
 public:
  // Takes the weights (already on the current device); `config` is the
  // rank's (TpLocalConfig). `block_size`: tokens per KV block.
  static StatusOr<std::unique_ptr<CudaModel>> Create(const ModelConfig& config, CudaWeights weights, size_t block_size);
  // Batch sizes decode steps are padded to and captured at (empty: eager
  // only, vLLM's --enforce-eager). Drops graphs captured so far.
  void SetCudaGraphSizes(std::vector<size_t> sizes);
  // Whether decode steps run the RMSNorm (and SiLU-and-mul) inside their
  // GEMVs (the default) or as kernels of their own: for measuring the
  // fusion. Drops graphs captured so far.
  void SetFusedDecode(bool on) {
    DropGraphs();
    fused_decode_ = on;
  }
  // Sums the projections over `comm`'s ranks (not owned; nullptr: one rank,
  // no communication). Drops graphs captured so far.
  void SetCommunicator(kernels::cuda::NcclCommunicator* comm) {
    DropGraphs();
    comm_ = comm;
  }
  ~CudaModel();
  CudaModel(const CudaModel&) = delete;
  CudaModel& operator=(const CudaModel&) = delete;

  // (Re)allocates the KV cache with `num_blocks` blocks, zeroed.
  Status AllocateKvCache(size_t num_blocks);
  void FreeKvCache();
  size_t kv_num_blocks() const { return num_blocks_; }
  // Bytes one KV block takes across layers, K and V.
  size_t kv_bytes_per_block() const;

  // Runs the batch, samples on the device the rows `sampling` marks (empty:
  // none) and copies the other rows' fp32 logits to pinned host memory the
  // model owns, valid until the next call. The KV cache must be allocated.
  StatusOr<ForwardOutput> Forward(const ForwardBatch& batch, const std::vector<DeviceSampling>& sampling);
  // Forward with every row's logits copied back ([logits_indices.size() × vocab]).
  StatusOr<const float*> Forward(const ForwardBatch& batch);
  // Forward, the logits copied into `logits`.
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
  // Copies the batch's index arrays (and the rows to sample) to the device
  // in one transfer.
  Status UploadBatch(const ForwardBatch& batch, const std::vector<kernels::cuda::SamplingRow>& sample_rows = {});
  // Enqueues the whole forward pass (embedding to logits) of the uploaded batch.
  Status Enqueue(const ForwardBatch& batch, size_t attention_splits);
  Status Layer(size_t index, const ForwardBatch& batch, size_t attention_splits);
  // hidden (+)= x · wᵀ (+ bias) for the o or down projection: rank 0 (or the
  // only rank) adds into the residual stream, the others write their share,
  // and the communicator sums them.
  Status ProjectIntoResidual(const Bf16* x, const Bf16* w, const float* bias, size_t rows, size_t k);
  // out[rows × n] = RMSNorm(hidden_ rows) · w[n × hidden]ᵀ (rows picked by
  // row_index when given): one fused GEMV at decode sizes, else RmsNormToBf16
  // into normed_ and the matmul.
  Status NormMatmul(const int32_t* row_index, const float* norm, const Bf16* w, float* out, size_t rows, size_t n);
  // Pads a step of single-token decodes (each sampled) to the next capture
  // size; false when the step does not qualify.
  bool PadForGraph(const ForwardBatch& batch, ForwardBatch* padded) const;
  // Runs the padded batch through its graph, capturing it first if needed.
  Status ReplayGraph(const ForwardBatch& padded, const std::vector<kernels::cuda::SamplingRow>& sample_rows);
  // Grows the pinned host buffers for logits and sampled ids.
  Status ReserveHost(size_t logit_floats, size_t sampled_ints);
  void DropGraphs();

  ModelConfig config_;
  CudaWeights weights_;
  size_t block_size_ = 0, num_blocks_ = 0, num_sms_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<kernels::cuda::Bf16Gemm> gemm_;
  DeviceArray<float> rope_cos_, rope_sin_;            // [max_position_embeddings × head_dim / 2]
  std::vector<DeviceArray<Bf16>> k_cache_, v_cache_;  // per layer

  // The batch's index arrays: one device block, one pinned host staging block.
  DeviceArray<int32_t> batch_meta_;
  int32_t* staging_ = nullptr;
  size_t staging_ints_ = 0;
  float* host_logits_ = nullptr;  // pinned
  size_t host_logits_floats_ = 0;
  // Device sampling: the rows (in the batch upload), their tokens and NaN
  // counts on the device and, pinned, on the host.
  const kernels::cuda::SamplingRow* sample_rows_ = nullptr;
  DeviceArray<int32_t> sampled_;
  int32_t* host_sampled_ = nullptr;
  size_t host_sampled_ints_ = 0;
  const int32_t *token_ids_ = nullptr, *positions_ = nullptr, *token_request_ = nullptr, *block_tables_ = nullptr,
                *logits_indices_ = nullptr;
  const int64_t* slot_mapping_ = nullptr;
  // Attention's work split: prefill tiles and the tokens left to the
  // per-token kernel (no list: every token).
  const int32_t *prefill_tiles_ = nullptr, *token_list_ = nullptr;
  size_t num_prefill_tiles_ = 0, token_list_size_ = 0;
  std::vector<int32_t> tiles_scratch_, others_scratch_;

  // Activations.
  DeviceArray<float> hidden_, qkv_, gate_up_, logits_, attention_scratch_;
  DeviceArray<Bf16> normed_, attn_, act_;

  std::vector<size_t> graph_sizes_;                              // ascending
  bool fused_decode_ = true;
  kernels::cuda::NcclCommunicator* comm_ = nullptr;
  std::map<std::pair<size_t, size_t>, cudaGraphExec_t> graphs_;  // (batch, table width) → graph
};

}  // namespace llmserve::worker::cuda
