#pragma once
// The CUDA ForwardBackend, where this build has one (worker/cuda/); a build
// without nvcc links cuda_backend_unavailable.cc, whose Create says so.

#include <memory>

#include "base/status_or.h"
#include "common/ipc/communicator.h"
#include "worker/forward_backend.h"
#include "worker/model_runner.h"

namespace llmserve::worker {

// Whether this build has the CUDA backend and a CUDA device is visible.
bool CudaBackendAvailable();

// Loads config.model_dir onto a CUDA device (bf16 weights) for a runner
// configured with `config` (block_size, kv_cache_memory_bytes or
// memory_fraction of the GPU's memory, max batch sizes). At tensor-parallel
// size N, rank r takes device r and its share of the weights, and the ranks
// sum their projections through NCCL, set up over `comm` (the ranks' host
// communicator; unused at size 1).
StatusOr<std::unique_ptr<ForwardBackend>> CreateCudaBackend(const ModelRunnerConfig& config,
                                                            common::ipc::Communicator* comm = nullptr);

}  // namespace llmserve::worker
