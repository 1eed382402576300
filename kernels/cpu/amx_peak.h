#pragma once
// The AMX compute ceiling of one core, for benchmarks that report a kernel's
// rate as a fraction of it: tdpbf16ps on operands already in tiles, so no
// memory traffic limits it. The caller must have AMX enabled for its thread
// (see cpu_features.h) and checked that the CPU has it.

#include <cstddef>

namespace llmserve::kernels::cpu {

// Floating-point operations one AmxPeakLoop iteration performs: four 16x16
// tile products over 32 bf16 pairs, a multiply and an add each.
inline constexpr double kAmxPeakFlopsPerIteration = 4.0 * 16 * 16 * 32 * 2;

// Runs `iterations` × 4 tile products on the calling thread.
void AmxPeakLoop(size_t iterations);

}  // namespace llmserve::kernels::cpu
