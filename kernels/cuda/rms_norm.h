#pragma once
// RMSNorm on the GPU, fp32, one thread block per row.

#include <cuda_runtime.h>

#include <cstddef>

#include "base/status.h"

namespace llmserve::kernels::cuda {

// Device pointers: out[r][i] = x[r][i] / sqrt(mean(x[r]^2) + eps) * weight[i].
// Enqueues on `stream`; returns the launch status.
Status RmsNorm(const float* x, const float* weight, float* out, size_t rows, size_t dim, float eps,
               cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
