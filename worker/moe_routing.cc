#include "worker/moe_routing.h"

#include <glog/logging.h>

#include <cmath>
#include <vector>

namespace llmserve::worker {

RoutingRule RoutingRuleOf(const MoeConfig& c, const float* bias) {
  RoutingRule r;
  r.num_experts = c.num_experts;
  r.k = c.num_experts_per_tok;
  r.scoring = c.scoring;
  r.renormalize = c.norm_topk_prob;
  r.group_score = c.group_score;
  r.n_group = c.n_group;
  r.topk_group = c.topk_group;
  r.correction_bias = bias;
  r.scale = static_cast<float>(c.routed_scaling_factor);
  return r;
}

namespace {

// p[e] = the score of each expert from one row of logits.
void Scores(const float* row, size_t n, MoeScoring scoring, float* p) {
  if (scoring == MoeScoring::kSigmoid) {
    for (size_t e = 0; e < n; ++e) p[e] = 1.f / (1.f + std::exp(-row[e]));
    return;
  }
  float max = row[0];
  for (size_t e = 1; e < n; ++e) max = std::max(max, row[e]);
  float sum = 0;
  for (size_t e = 0; e < n; ++e) {
    p[e] = std::exp(row[e] - max);
    sum += p[e];
  }
  for (size_t e = 0; e < n; ++e) p[e] /= sum;
}

// Index of the largest v[i] with eligible[i] (a strict > keeps the lower index of equals).
size_t ArgmaxEligible(const float* v, const std::vector<bool>& eligible) {
  size_t best = eligible.size();
  for (size_t i = 0; i < eligible.size(); ++i) {
    if (eligible[i] && (best == eligible.size() || v[i] > v[best])) best = i;
  }
  return best;
}

// Marks ineligible the experts outside the topk_group best groups.
void KeepBestGroups(const float* choice, const RoutingRule& r, std::vector<float>& group_scores,
                    std::vector<bool>& groups, std::vector<bool>& eligible) {
  const size_t per = r.num_experts / r.n_group;
  for (size_t g = 0; g < r.n_group; ++g) {
    const float* c = choice + g * per;
    float first = c[0], second = -INFINITY;
    for (size_t i = 1; i < per; ++i) {
      if (c[i] > first) {
        second = first;
        first = c[i];
      } else if (c[i] > second) {
        second = c[i];
      }
    }
    group_scores[g] = r.group_score == MoeGroupScore::kMax ? first : first + second;
  }
  std::vector<bool> all(r.n_group, true);
  std::fill(groups.begin(), groups.end(), false);
  for (size_t j = 0; j < r.topk_group; ++j) {
    const size_t g = ArgmaxEligible(group_scores.data(), all);
    all[g] = false;
    groups[g] = true;
  }
  for (size_t e = 0; e < r.num_experts; ++e) eligible[e] = groups[e / per];
}

}  // namespace

void RouteTokens(const float* logits, size_t tokens, const RoutingRule& r, int32_t* experts, float* weights) {
  const size_t n = r.num_experts, k = r.k;
  CHECK_GE(n, k);
  const bool grouped = r.group_score != MoeGroupScore::kNone;
  if (grouped) CHECK(r.n_group > 0 && n % r.n_group == 0 && r.topk_group <= r.n_group);
  std::vector<float> p(n), choice(n), group_scores(r.n_group);
  std::vector<bool> eligible(n), groups(r.n_group);
  for (size_t t = 0; t < tokens; ++t) {
    Scores(logits + t * n, n, r.scoring, p.data());
    for (size_t e = 0; e < n; ++e) choice[e] = r.correction_bias != nullptr ? p[e] + r.correction_bias[e] : p[e];
    if (grouped) {
      KeepBestGroups(choice.data(), r, group_scores, groups, eligible);
    } else {
      std::fill(eligible.begin(), eligible.end(), true);
    }
    // k passes of arg-max: k is small (2 to 8).
    int32_t* ids = experts + t * k;
    float* w = weights + t * k;
    float chosen = 0;
    for (size_t j = 0; j < k; ++j) {
      const size_t best = ArgmaxEligible(choice.data(), eligible);
      CHECK_LT(best, n);
      eligible[best] = false;
      ids[j] = static_cast<int32_t>(best);
      w[j] = p[best];
      chosen += p[best];
    }
    for (size_t j = 0; j < k; ++j) {
      if (r.renormalize) w[j] /= chosen;
      w[j] *= r.scale;
    }
  }
}

}  // namespace llmserve::worker
