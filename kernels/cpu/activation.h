#pragma once
// Gated activations of the MLP: out = act(gate) * up.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// For each of `rows` rows of gate_up = [gate (ff) | up (ff)] (row stride 2*ff):
// out[r][i] = silu(gate[i]) * up[i], with silu(g) = g / (1 + exp(-g)). Out row
// stride is ff. Uses AVX-512 (a polynomial exp, within a few ulp of std::exp)
// where ActiveIsa() allows, else the scalar code of SiluMulReference; rows are
// independent, so a row's bits do not depend on the batch.
void SiluMul(const float* gate_up, size_t rows, size_t ff, float* out, ThreadPool& pool);

// SiluMul's output rounded to bf16 straight into the tiled A layout of
// gemm_amx.h (`a` holds LinearWeight::TiledInputElements(rows) of a weight
// with ff inputs): the same bits as amx::ConvertRows of SiluMul's output,
// without writing and re-reading the fp32 rows. Feeds
// LinearWeight::ApplyTiled. Requires Isa::kAvx512 or better.
void SiluMulTiled(const float* gate_up, size_t rows, size_t ff, uint16_t* a, ThreadPool& pool);

// Scalar reference of SiluMul (std::exp).
void SiluMulReference(const float* gate_up, size_t rows, size_t ff, float* out);

}  // namespace llmserve::kernels::cpu
