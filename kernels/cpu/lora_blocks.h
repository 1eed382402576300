#pragma once
// The per-ISA blocks of kernels/cpu/lora.h: the update of m ≤ kLoraBlockRows
// rows of one adapter, x[r] and y[r] pointing at row r. Same arithmetic (and
// bits) on every path; each path requires its Isa level.

#include <cstddef>

#include "kernels/cpu/lora.h"

namespace llmserve::kernels::cpu::lora {

inline constexpr size_t kLoraBlockRows = 4;

void BlockScalar(const LoraFactors& f, const float* const* x, float* const* y, size_t m);
// Requires Isa::kAvx2.
void BlockAvx2(const LoraFactors& f, const float* const* x, float* const* y, size_t m);
// Requires Isa::kAvx512.
void BlockAvx512(const LoraFactors& f, const float* const* x, float* const* y, size_t m);

}  // namespace llmserve::kernels::cpu::lora
