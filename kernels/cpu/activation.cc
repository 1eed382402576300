#include "kernels/cpu/activation.h"

#include <cmath>

namespace llmserve::kernels::cpu {

void SiluMulReference(const float* gate_up, size_t rows, size_t ff, float* out) {
  for (size_t r = 0; r < rows; ++r) {
    const float* g = gate_up + r * 2 * ff;
    const float* u = g + ff;
    for (size_t i = 0; i < ff; ++i) out[r * ff + i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  }
}

void SiluMul(const float* gate_up, size_t rows, size_t ff, float* out, ThreadPool& pool) {
  // Element-wise, so any split gives the reference's bits; split the flat range.
  const size_t n = rows * ff;
  pool.ParallelFor(n, 4096, [&](size_t begin, size_t end, size_t) {
    for (size_t idx = begin; idx < end; ++idx) {
      const size_t r = idx / ff, i = idx % ff;
      const float g = gate_up[r * 2 * ff + i];
      out[idx] = g / (1.0f + std::exp(-g)) * gate_up[r * 2 * ff + ff + i];
    }
  });
}

}  // namespace llmserve::kernels::cpu
