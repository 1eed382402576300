#include "kernels/cpu/rms_norm_reference.h"

#include <cmath>

namespace llmserve::kernels::cpu {

void RmsNormReference(const float* x, const float* weight, float* out, size_t rows, size_t dim,
                      float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x + r * dim;
    double sum_sq = 0.0;
    for (size_t i = 0; i < dim; ++i) sum_sq += static_cast<double>(row[i]) * row[i];
    const float inv_rms = 1.0f / std::sqrt(static_cast<float>(sum_sq / dim) + eps);
    for (size_t i = 0; i < dim; ++i) out[r * dim + i] = row[i] * inv_rms * weight[i];
  }
}

}  // namespace llmserve::kernels::cpu
