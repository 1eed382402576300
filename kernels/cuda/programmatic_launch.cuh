#pragma once
// The device side of programmatic dependent launch (programmatic_launch.h)
// and a launch that asks for it. A kernel that may be launched this way
// calls WaitForPriorGrid before it reads what earlier kernels wrote, and
// LetDependentsLaunch to let the next kernel's blocks be scheduled. Both are
// no-ops in a plain launch and before sm_90.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/programmatic_launch.h"

namespace llmserve::kernels::cuda {

__device__ __forceinline__ void WaitForPriorGrid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void LetDependentsLaunch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, shared, stream>>>(args...), as a programmatic
// dependent launch when `group` uses it.
template <typename... Params, typename... Args>
cudaError_t LaunchKernel(LaunchGroup group, void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared,
                         cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  if (UseProgrammaticLaunch(group)) {
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace llmserve::kernels::cuda
