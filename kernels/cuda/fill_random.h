#pragma once
// Device-side fills for weights made up on the GPU (benchmarks of shapes
// too large to write as files): values are a hash of (seed, index), so a
// fill is reproducible and needs no host memory.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace llmserve::kernels::cuda {

// x[i] = uniform in [-scale, scale), from (seed, i).
Status FillUniformBf16(__nv_bfloat16* x, size_t n, uint64_t seed, float scale, cudaStream_t stream);
// x[i] = value.
Status FillConstantF32(float* x, size_t n, float value, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
