#pragma once
// The mixture-of-experts MLP of one layer on CPU, with its scratch buffers.
//
// Per call: router logits (fp32 products) → top-k per token (moe_routing.h)
// → the (token, slot) pairs grouped by expert, ascending token within an
// expert → per expert with any rows: its rows gathered, gate_up matmul,
// SiLU·up, down matmul → per token the sum over slots j = 0..k-1, in the
// order top-k chose them, of weight_j · expert_j's output row, plus the shared
// experts' output row where the layer has them.
//
// Batch invariance: every step computes a token's row from that row alone
// (LinearWeight's rows do not depend on how many rows a matmul has, SiluMul
// is per row, the sum runs in slot order), so a token's output is bitwise
// the same whichever other tokens share the batch or an expert.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "worker/model_config.h"
#include "worker/moe_weights.h"

namespace llmserve::worker {

class MoeLayer {
 public:
  MoeLayer() = default;
  MoeLayer(const MoeLayer&) = delete;
  MoeLayer& operator=(const MoeLayer&) = delete;

  // Sizes the scratch for up to `tokens` rows; returns its bytes.
  // `local_shared`: this rank's width of the shared experts (0: none).
  size_t Reserve(const MoeConfig& config, size_t hidden, size_t local_intermediate, size_t local_shared,
                 size_t tokens);

  // y[tokens × hidden] = the MoE MLP of x[tokens × hidden] (rows `hidden`
  // apart): this rank's partial sum when the experts are tensor-parallel,
  // or, under expert parallelism, the sum over the chosen experts it holds.
  // `tokens` must not exceed the last Reserve.
  void Forward(const MoeWeights& w, const MoeConfig& config, const float* x, size_t tokens, size_t hidden, float* y,
               kernels::cpu::ThreadPool& pool);

 private:
  // Fills order_ (the (token, slot) pairs grouped by expert), offsets_ and slot_row_.
  void GroupByExpert(size_t tokens, size_t num_experts, size_t k);
  // shared_out_ = the shared experts' MLP of all `tokens` rows of x.
  void SharedExperts(const ExpertWeights& shared, const float* x, size_t tokens, kernels::cpu::ThreadPool& pool);

  std::vector<float> router_logits_;  // [tokens × num_experts]
  std::vector<int32_t> chosen_;       // [tokens × k] expert ids, slot order
  std::vector<float> weights_;        // [tokens × k] routing weights
  std::vector<int32_t> offsets_;      // [num_experts + 1]: expert e's rows [offsets_[e], offsets_[e + 1])
  std::vector<int32_t> next_row_;     // [num_experts]: GroupByExpert's next free row of each expert
  std::vector<int32_t> order_;        // [tokens × k]: grouped row -> token
  std::vector<int32_t> slot_row_;     // [tokens × k]: (token, slot) -> grouped row
  std::vector<float> gathered_;       // [tokens × hidden]: one expert's input rows
  std::vector<float> gate_up_;        // [tokens × 2 ff]
  std::vector<float> act_;            // [tokens × ff]
  std::vector<float> expert_out_;     // [tokens × k × hidden]: down outputs, grouped rows
  std::vector<float> shared_out_;     // [tokens × hidden]: the shared experts' output (when any)
};

}  // namespace llmserve::worker
