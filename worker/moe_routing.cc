#include "worker/moe_routing.h"

#include <glog/logging.h>

#include <cmath>
#include <vector>

namespace llmserve::worker {

void TopKRouting(const float* logits, size_t tokens, size_t num_experts, size_t k, bool renormalize,
                 int32_t* experts, float* weights) {
  CHECK_GE(num_experts, k);
  std::vector<float> p(num_experts);
  std::vector<bool> taken(num_experts);
  for (size_t t = 0; t < tokens; ++t) {
    const float* row = logits + t * num_experts;
    float max = row[0];
    for (size_t e = 1; e < num_experts; ++e) max = std::max(max, row[e]);
    float sum = 0;
    for (size_t e = 0; e < num_experts; ++e) {
      p[e] = std::exp(row[e] - max);
      sum += p[e];
    }
    for (size_t e = 0; e < num_experts; ++e) p[e] /= sum;
    // k passes of arg-max: k is small (2 to 8), and a strict > keeps the
    // lower id of equal weights.
    std::fill(taken.begin(), taken.end(), false);
    int32_t* ids = experts + t * k;
    float* w = weights + t * k;
    float chosen = 0;
    for (size_t j = 0; j < k; ++j) {
      size_t best = num_experts;
      for (size_t e = 0; e < num_experts; ++e) {
        if (!taken[e] && (best == num_experts || p[e] > p[best])) best = e;
      }
      taken[best] = true;
      ids[j] = static_cast<int32_t>(best);
      w[j] = p[best];
      chosen += p[best];
    }
    if (renormalize) {
      for (size_t j = 0; j < k; ++j) w[j] /= chosen;
    }
  }
}

}  // namespace llmserve::worker
