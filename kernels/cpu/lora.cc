#include "kernels/cpu/lora.h"

#include <glog/logging.h>

namespace llmserve::kernels::cpu {

void LoraShrinkExpandRow(const LoraFactors& f, const float* x, float* y) {
  DCHECK_LE(f.rank, kMaxLoraRank);
  float t[kMaxLoraRank];
  for (size_t i = 0; i < f.rank; ++i) t[i] = 0.f;
  // Shrink: t = A·x, each t[i] summed over k in index order (the inner loop
  // runs across i, so it vectorizes without reordering any sum).
  for (size_t k = 0; k < f.in; ++k) {
    const float xk = x[k];
    const float* a = f.a_t + k * f.rank;
    for (size_t i = 0; i < f.rank; ++i) t[i] += a[i] * xk;
  }
  for (size_t i = 0; i < f.rank; ++i) t[i] *= f.scale;
  // Expand: y += B·t, one rank term at a time in index order.
  for (size_t i = 0; i < f.rank; ++i) {
    const float ti = t[i];
    const float* b = f.b_t + i * f.out;
    for (size_t j = 0; j < f.out; ++j) y[j] += b[j] * ti;
  }
}

void LoraShrinkExpand(const LoraFactors& f, const float* x, size_t x_stride, const int32_t* rows, size_t n,
                      float* y, size_t y_stride, ThreadPool& pool) {
  CHECK_LE(f.rank, kMaxLoraRank);
  if (n == 0 || f.rank == 0) return;
  pool.ParallelFor(n, 1, [&](size_t begin, size_t end, size_t) {
    for (size_t i = begin; i < end; ++i) {
      const size_t r = static_cast<size_t>(rows[i]);
      LoraShrinkExpandRow(f, x + r * x_stride, y + r * y_stride);
    }
  });
}

}  // namespace llmserve::kernels::cpu
