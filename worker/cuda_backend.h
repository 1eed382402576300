#pragma once
// The CUDA ForwardBackend, where this build has one (worker/cuda/); a build
// without nvcc links cuda_backend_unavailable.cc, whose Create says so.

#include <memory>

#include "base/status_or.h"
#include "worker/forward_backend.h"
#include "worker/model_runner.h"

namespace llmserve::worker {

// Whether this build has the CUDA backend and a CUDA device is visible.
bool CudaBackendAvailable();

// Loads config.model_dir onto CUDA device 0 (bf16 weights) for a runner
// configured with `config` (block_size, kv_cache_memory_bytes or
// memory_fraction of the GPU's memory, max batch sizes).
StatusOr<std::unique_ptr<ForwardBackend>> CreateCudaBackend(const ModelRunnerConfig& config);

}  // namespace llmserve::worker
