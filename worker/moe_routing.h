#pragma once
// Top-k routing of a mixture-of-experts layer: which experts each token's
// MLP runs, and with what weights.

#include <cstddef>
#include <cstdint>

#include "worker/model_config.h"

namespace llmserve::worker {

// How one layer's router logits become experts and weights.
struct RoutingRule {
  size_t num_experts = 0;
  size_t k = 0;
  MoeScoring scoring = MoeScoring::kSoftmax;
  bool renormalize = false;
  MoeGroupScore group_score = MoeGroupScore::kNone;
  size_t n_group = 1, topk_group = 1;
  const float* correction_bias = nullptr;  // [num_experts], added to the scores for the choice only; may be null
  float scale = 1.f;                       // routed_scaling_factor
};

// The rule of `config`'s MoE layers (`bias`: the layer's correction bias, or null).
RoutingRule RoutingRuleOf(const MoeConfig& config, const float* bias);

// For each of `tokens` rows of router logits [tokens × num_experts] (fp32):
// scores p = softmax(logits) (max subtracted, sums in expert order) or
// sigmoid(logits); choice c = p + correction_bias. With groups, each group's
// score is its largest c (kMax) or its two largest summed (kTopTwoSum), and
// only the topk_group best groups (equal scores: lower group) stay eligible.
// The k largest eligible c in descending order, equal c by lower expert id,
// go to experts[t * k + j] with weights[t * k + j] = p; with `renormalize`
// the k weights are then divided by their sum; last they are multiplied by
// `scale`. Each row is computed alone, so its result does not depend on the
// other rows.
void RouteTokens(const float* logits, size_t tokens, const RoutingRule& rule, int32_t* experts, float* weights);

}  // namespace llmserve::worker
