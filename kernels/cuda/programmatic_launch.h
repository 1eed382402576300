#pragma once
// Programmatic dependent launch (compute capability 9.0 and later): a kernel
// launched this way has its blocks scheduled while the kernel before it in
// the stream still runs; they wait on the device for it to finish (and its
// writes to be visible) before reading anything. In a decode step of many
// short kernels this takes the launch gap between them away. Two groups of
// kernels can be switched on or off separately, process-wide (read at
// launch: a captured CUDA graph keeps what it saw), for measuring.

namespace llmserve::kernels::cuda {

enum class LaunchGroup {
  kGemv,       // the shared-memory decode GEMVs (gemv_bf16.h)
  kAttention,  // the q/k/v step, per-token paged attention and its split merge
};

// Default: on for both.
void SetProgrammaticLaunch(LaunchGroup group, bool on);
// Whether kernels of `group` are launched as programmatic dependents: on,
// and the current device takes it.
bool UseProgrammaticLaunch(LaunchGroup group);

}  // namespace llmserve::kernels::cuda
