#pragma once
// Status checks for CUDA runtime calls and kernel launches: every call's
// result is checked; a failure becomes a Status naming the call and the error.

#include <cuda_runtime.h>

#include <string>

#include "base/status.h"

namespace llmserve::kernels::cuda {

inline Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return Status::Internal(std::string(what) + ": " + cudaGetErrorString(err));
}

// Number of usable CUDA devices; 0 when there is no driver or no device
// (both are normal on CPU-only machines, not errors).
int CudaDeviceCount();

}  // namespace llmserve::kernels::cuda

#define LLMSERVE_CUDA_RETURN_IF_ERROR(call) \
  LLMSERVE_RETURN_IF_ERROR(::llmserve::kernels::cuda::CudaStatus((call), #call))
