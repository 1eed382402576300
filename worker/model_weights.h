#pragma once
// The weights of one tensor-parallel shard of a decoder-only transformer, in
// the layout the forward pass uses: q/k/v fused into one column-parallel
// matmul, gate/up fused likewise, o/down row-parallel, lm_head vocab-parallel.

#include <memory>
#include <vector>

#include "common/gguf/gguf_file.h"
#include "kernels/cpu/linear.h"
#include "worker/model_config.h"
#include "worker/mla_weights.h"
#include "worker/moe_weights.h"
#include "worker/safetensors.h"

namespace llmserve::worker {

// This shard's share of the model's dimensions.
struct ShardDims {
  size_t tp_rank = 0;
  size_t tp_size = 1;
  size_t num_heads = 0;          // local query heads
  size_t num_kv_heads = 0;       // local KV heads
  size_t intermediate_size = 0;  // local MLP width
  size_t moe_intermediate_size = 0;  // local width of each expert's MLP (MoE models; the whole width under EP)
  // Expert parallelism: local_experts[e] says whether this rank holds expert
  // e (whole); empty: every rank holds a slice of every expert.
  std::vector<bool> local_experts;
  size_t shared_intermediate_size = 0;  // local width of DeepSeek's shared experts (0: none)
  size_t vocab_begin = 0;        // this rank's lm_head rows [vocab_begin, vocab_end)
  size_t vocab_end = 0;
  size_t vocab_per_rank = 0;     // ceil(vocab / tp_size): the all_gather unit
};

struct LayerWeights {
  std::vector<float> input_norm;             // [hidden]
  std::vector<float> post_attention_norm;    // [hidden]
  std::vector<float> q_norm, k_norm;         // [head_dim] (Qwen3 only)
  // [(heads + 2 kv_heads) * head_dim × hidden]; MLA: q_a_proj (or this
  // rank's q_proj rows), then kv_a_proj_with_mqa.
  kernels::cpu::LinearWeight qkv;
  std::vector<float> qkv_bias;               // same rows as qkv, or empty
  kernels::cpu::LinearWeight o;              // [hidden × heads * head_dim] (MLA: heads * v_head_dim)
  MlaWeights mla;                            // the rest of DeepSeek's attention (MLA models)
  std::vector<float> o_bias;                 // [hidden] or empty (added after the all-reduce)
  kernels::cpu::LinearWeight gate_up;        // [2 * intermediate × hidden] (dense layers)
  kernels::cpu::LinearWeight down;           // [hidden × intermediate] (dense layers)
  MoeWeights moe;                            // the experts instead (MoE layers), else empty
  // An fp8 KV cache holds K / k_scale and V / v_scale (the checkpoint's
  // self_attn.k_scale / v_scale; 1 where it has none).
  float k_scale = 1.f, v_scale = 1.f;
  bool has_kv_scales = false;
};

struct ModelWeights {
  std::unique_ptr<Checkpoint> checkpoint;    // keeps the embedding table mapped
  TensorView embedding;                      // [vocab × hidden], replicated, in the mapping
  // GGUF models instead: the file stays mapped and each looked-up row of the
  // embedding table is dequantized then (no dequantized copy of the table).
  std::unique_ptr<common::gguf::GgufFile> gguf;
  const common::gguf::GgufTensorInfo* gguf_embedding = nullptr;  // in `gguf`
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;             // [hidden]
  kernels::cpu::LinearWeight lm_head;        // this rank's vocab rows
  // Bytes of packed matmul weights held (embedding rows excluded). Every
  // expert this rank holds counts (what the weights occupy), although a
  // decode step reads only the chosen ones (ExpectedStepBytes).
  size_t matmul_bytes() const;
};

// Matmul weight bytes a step of `tokens` tokens is expected to read: every
// weight but the experts, plus each MoE layer's held experts times the
// chance that one of them is chosen by at least one token when each token
// picks k of num_experts uniformly, 1 − (1 − k/E)^tokens (for one token,
// exactly its k experts).
double ExpectedStepBytes(const ModelWeights& weights, const MoeConfig& moe, size_t tokens);

}  // namespace llmserve::worker
