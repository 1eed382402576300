#pragma once
// The weights of a decoder-only transformer in GPU memory, bf16 matrices
// laid out as the CUDA forward pass uses them: q/k/v fused into one [rows ×
// hidden] matrix, gate/up likewise; norms and biases in fp32.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/transformer_ops.h"
#include "worker/model_config.h"

namespace llmserve::worker::cuda {

using kernels::cuda::Bf16;
using kernels::cuda::DeviceArray;

struct CudaLayerWeights {
  DeviceArray<float> input_norm, post_attention_norm;  // [hidden]
  DeviceArray<float> q_norm, k_norm;                   // [head_dim] (Qwen3), else empty
  DeviceArray<Bf16> qkv;                               // [(heads + 2 kv_heads) · head_dim × hidden]
  DeviceArray<float> qkv_bias;                         // its rows, or empty
  DeviceArray<Bf16> o;                                 // [hidden × heads · head_dim]
  DeviceArray<float> o_bias;                           // [hidden] or empty
  DeviceArray<Bf16> gate_up;                           // [2 · intermediate × hidden]
  DeviceArray<Bf16> down;                              // [hidden × intermediate]
};

struct CudaWeights {
  DeviceArray<Bf16> embedding;  // [vocab × hidden]
  std::vector<CudaLayerWeights> layers;
  DeviceArray<float> final_norm;
  DeviceArray<Bf16> lm_head;  // [vocab × hidden]; empty when tied to the embedding
  const Bf16* lm_head_data() const { return lm_head.empty() ? embedding.data() : lm_head.data(); }
  // Bytes of matrices a decode step reads (the embedding only where it is the lm_head).
  size_t matmul_bytes() const;
  // Bytes held in all.
  size_t bytes() const;
};

// A tensor-parallel rank's share of the weights: rows of q/k/v and gate/up
// (and of the q/k/v biases), columns of o and down; norms, o's bias, the
// embedding and lm_head whole.
struct TpShard {
  size_t rank = 0, size = 1;
};

// The config one rank of `tp_size` runs: its attention heads, KV heads and
// MLP width. An error where tp_size does not divide them.
StatusOr<ModelConfig> TpLocalConfig(const ModelConfig& config, size_t tp_size);

// Reads DIR's safetensors (bf16, f16 or f32; rounded to bf16), this rank's
// share of them (`config`: the whole model's), onto the current device.
// Errors name the file and the tensor.
StatusOr<CudaWeights> LoadCudaWeights(const std::string& dir, const ModelConfig& config, bool show_progress,
                                      TpShard shard = {});

// Weights made up on the device for `config` (the whole model's; this
// rank's share): matrices uniform in ±0.02, norms 1 (benchmarks of shapes no
// test file holds, --load-format dummy).
StatusOr<CudaWeights> RandomCudaWeights(const ModelConfig& config, uint64_t seed, TpShard shard = {});

}  // namespace llmserve::worker::cuda
