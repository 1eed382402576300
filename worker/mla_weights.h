#pragma once
// The weights of one DeepSeek multi-head latent attention (MLA) layer for one
// tensor-parallel shard, beyond the first matmul (LayerWeights::qkv: q_a_proj
// or q_proj, then kv_a_proj_with_mqa) and o_proj. kv_b_proj is split per
// head into its two absorbed halves: W_UK, which takes a head's query into
// latent space, and W_UV, which takes the attention's latent output to the
// head's value space.

#include <vector>

#include "kernels/cpu/linear.h"

namespace llmserve::worker {

struct MlaWeights {
  std::vector<float> q_a_norm;                      // [q_lora_rank]; empty without a q LoRA
  kernels::cpu::LinearWeight q_b;                   // [local heads × qk_head_dim × q_lora_rank] (q LoRA only)
  std::vector<float> kv_a_norm;                     // [kv_lora_rank]
  std::vector<kernels::cpu::LinearWeight> uk;       // per local head: [kv_lora_rank × qk_nope_head_dim]
  std::vector<kernels::cpu::LinearWeight> uv;       // per local head: [v_head_dim × kv_lora_rank]

  size_t bytes() const {
    size_t n = q_b.bytes();
    for (const auto& w : uk) n += w.bytes();
    for (const auto& w : uv) n += w.bytes();
    return n;
  }
};

}  // namespace llmserve::worker
