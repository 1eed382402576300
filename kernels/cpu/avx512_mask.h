#pragma once
// The mask of the first n of 16 lanes (all 16 when n >= 16), for the masked
// loads and stores at the tail of a row. For kernels compiled with a
// per-function target attribute that includes avx512f.
#include <immintrin.h>

#include <cstddef>

namespace llmserve::kernels::cpu {

__attribute__((target("avx512f"))) inline __mmask16 LowMask(size_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1);
}

}  // namespace llmserve::kernels::cpu
