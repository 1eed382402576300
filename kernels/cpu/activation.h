#pragma once
// Gated activations of the MLP: out = act(gate) * up.

#include <cstddef>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// For each of `rows` rows of gate_up = [gate (ff) | up (ff)] (row stride 2*ff):
// out[r][i] = silu(gate[i]) * up[i], with silu(g) = g / (1 + exp(-g)). Out row
// stride is ff. Uses AVX-512 (a polynomial exp, within a few ulp of std::exp)
// where ActiveIsa() allows, else the scalar code of SiluMulReference; rows are
// independent, so a row's bits do not depend on the batch.
void SiluMul(const float* gate_up, size_t rows, size_t ff, float* out, ThreadPool& pool);

// Scalar reference of SiluMul (std::exp).
void SiluMulReference(const float* gate_up, size_t rows, size_t ff, float* out);

}  // namespace llmserve::kernels::cpu
