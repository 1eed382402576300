#pragma once
// A read-only sweep over device memory: the bound a weight-streaming decode
// step is measured against (reads only, no writes, full-width loads).

#include <cuda_runtime.h>

#include <cstddef>

#include "base/status.h"

namespace llmserve::kernels::cuda {

// Reads `bytes` (a multiple of 16) at `data`; `sink` is one device word
// written only to keep the loads alive.
Status ReadSweep(const void* data, size_t bytes, unsigned* sink, cudaStream_t stream);

}  // namespace llmserve::kernels::cuda
