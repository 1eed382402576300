#include "kernels/cpu/rms_norm.h"

#include <cmath>

namespace llmserve::kernels::cpu {

void RmsNormRows(const float* x, size_t x_stride, const float* weight, float* out,
                 size_t out_stride, size_t rows, size_t dim, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* row = x + r * x_stride;
    // Eight lanes reduced in a fixed order: vectorisable, and the same bits for
    // a row wherever it sits in the batch.
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < dim; ++i) lane[i & 7] += static_cast<double>(row[i]) * row[i];
    const double sum_sq = ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
                          ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    const float inv_rms = 1.0f / std::sqrt(static_cast<float>(sum_sq / dim) + eps);
    float* dst = out + r * out_stride;
    for (size_t i = 0; i < dim; ++i) dst[i] = row[i] * inv_rms * weight[i];
  }
}

void RmsNorm(const float* x, size_t x_stride, const float* weight, float* out, size_t out_stride,
             size_t rows, size_t dim, float eps, ThreadPool& pool) {
  const size_t grain = dim >= 512 ? 4 : 64;
  pool.ParallelFor(rows, grain, [&](size_t begin, size_t end, size_t) {
    RmsNormRows(x + begin * x_stride, x_stride, weight, out + begin * out_stride, out_stride,
                end - begin, dim, eps);
  });
}

}  // namespace llmserve::kernels::cpu
