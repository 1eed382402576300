#pragma once
// The weights of one mixture-of-experts MLP (Qwen3-MoE, Mixtral, DeepSeek)
// for one tensor-parallel shard: the router, replicated, and every expert's
// SwiGLU MLP (DeepSeek's shared experts too) with its intermediate dimension
// split across the ranks as the dense MLP's is (gate/up column-parallel, down
// row-parallel).

#include <cstddef>
#include <vector>

#include "kernels/cpu/linear.h"

namespace llmserve::worker {

// One expert's MLP, this rank's share of it.
struct ExpertWeights {
  kernels::cpu::LinearWeight gate_up;  // [2 * local moe_intermediate × hidden]: gate rows, then up rows
  kernels::cpu::LinearWeight down;     // [hidden × local moe_intermediate]
};

struct MoeWeights {
  // [num_experts × hidden], packed for fp32 products whatever the model's
  // precision: the top-k choice should not flip on activation rounding.
  kernels::cpu::LinearWeight router;
  // Indexed by expert id; empty for a dense layer. Under expert parallelism
  // the experts of other ranks are here without rows (see held()).
  std::vector<ExpertWeights> experts;
  std::vector<float> correction_bias;  // [num_experts]: DeepSeek-V3's e_score_correction_bias, or empty
  // DeepSeek's shared experts, one MLP n_shared_experts × moe_intermediate
  // wide that every token runs; empty (no rows) when the model has none.
  ExpertWeights shared;

  bool empty() const { return experts.empty(); }
  // Whether this rank holds expert e.
  bool held(size_t e) const { return experts[e].down.rows() > 0; }
  // The first expert this rank holds (each rank holds at least one).
  const ExpertWeights& first_held() const {
    for (size_t e = 0; e < experts.size(); ++e) {
      if (held(e)) return experts[e];
    }
    return experts.front();
  }
  // Bytes of packed weights held (router and every expert).
  size_t bytes() const {
    size_t n = router.bytes();
    for (const auto& e : experts) n += e.gate_up.bytes() + e.down.bytes();
    return n + shared.gate_up.bytes() + shared.down.bytes();
  }
};

}  // namespace llmserve::worker
