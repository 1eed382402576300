#pragma once
// The row operations of MLA attention (mla_attention.cc), portable and
// AVX-512: a dot product over fixed lanes, y += p·x, and bf16 rows widened.
// Each path sums in one fixed order of its own, so results depend only on
// the ISA level chosen when the call starts, never on the batch.

#include <cstddef>
#include <cstdint>

namespace llmserve::kernels::cpu::internal {

struct MlaRowOps {
  float (*dot)(const float* a, const float* b, size_t n);
  void (*axpy)(float p, const float* x, float* y, size_t n);
  void (*widen_bf16)(const uint16_t* src, float* dst, size_t n);
};

// The AVX-512 ops (callers check ActiveIsa() first).
const MlaRowOps& MlaRowOpsAvx512();

}  // namespace llmserve::kernels::cpu::internal
