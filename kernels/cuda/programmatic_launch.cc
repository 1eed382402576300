#include "kernels/cuda/programmatic_launch.h"

#include <cuda_runtime.h>

#include <atomic>

namespace llmserve::kernels::cuda {

namespace {

std::atomic<bool> gemv_on{true}, attention_on{true};

// Compute capability 9.0 or later on the current device, read once.
bool DeviceTakesIt() {
  static const bool takes = []() {
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    return major >= 9;
  }();
  return takes;
}

}  // namespace

void SetProgrammaticLaunch(LaunchGroup group, bool on) {
  (group == LaunchGroup::kGemv ? gemv_on : attention_on).store(on);
}

bool UseProgrammaticLaunch(LaunchGroup group) {
  return (group == LaunchGroup::kGemv ? gemv_on : attention_on).load() && DeviceTakesIt();
}

}  // namespace llmserve::kernels::cuda
