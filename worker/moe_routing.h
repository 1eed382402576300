#pragma once
// Top-k routing of a mixture-of-experts layer: which experts each token's
// MLP runs, and with what weights.

#include <cstddef>
#include <cstdint>

namespace llmserve::worker {

// For each of `tokens` rows of router logits [tokens × num_experts] (fp32):
// p = softmax(logits) over all experts (fp32, max subtracted, sums in expert
// order); the k largest p in descending order, equal p by lower expert id,
// into experts[t * k + j] and weights[t * k + j]; with `renormalize` the k
// weights are then divided by their sum (Qwen3-MoE's norm_topk_prob, always
// for Mixtral, where it equals a softmax over the top-k logits). Each row is
// computed alone, so its result does not depend on the other rows.
void TopKRouting(const float* logits, size_t tokens, size_t num_experts, size_t k, bool renormalize,
                 int32_t* experts, float* weights);

}  // namespace llmserve::worker
