#include "worker/cuda_backend.h"

namespace llmserve::worker {

bool CudaBackendAvailable() { return false; }

StatusOr<std::unique_ptr<ForwardBackend>> CreateCudaBackend(const ModelRunnerConfig&, common::ipc::Communicator*) {
  return Status::Unimplemented(
      "--device cuda: this build has no CUDA backend (configure with nvcc on PATH or -DLLMSERVE_CUDA=ON)");
}

}  // namespace llmserve::worker
