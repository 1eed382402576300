#pragma once
// Plain scalar RMSNorm, the reference every optimised RMSNorm is tested against.

#include <cstddef>

namespace llmserve::kernels::cpu {

// out[r][i] = x[r][i] / sqrt(mean_i(x[r]^2) + eps) * weight[i], for each of `rows`
// rows of `dim` floats. `out` may alias `x`.
void RmsNormReference(const float* x, const float* weight, float* out, size_t rows, size_t dim,
                      float eps);

}  // namespace llmserve::kernels::cpu
