#include "kernels/cpu/amx_peak.h"

#include <cstdint>

namespace llmserve::kernels::cpu {

void AmxPeakLoop(size_t iterations) {
  struct alignas(64) Config {
    uint8_t palette = 1, start_row = 0, reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
  } config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = 16;
    config.colsb[t] = 64;
  }
  alignas(64) static const uint16_t operands[16 * 32] = {};
  __asm__ volatile("ldtilecfg %0" ::"m"(config) : "memory");
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm4" ::"r"(operands), "r"(64L) : "memory");
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm5" ::"r"(operands), "r"(64L) : "memory");
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm6" ::"r"(operands), "r"(64L) : "memory");
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm7" ::"r"(operands), "r"(64L) : "memory");
  __asm__ volatile("tilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2\n\ttilezero %%tmm3" ::: "memory");
  for (size_t i = 0; i < iterations; ++i) {
    __asm__ volatile(
        "tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n\t"
        "tdpbf16ps %%tmm7, %%tmm4, %%tmm1\n\t"
        "tdpbf16ps %%tmm6, %%tmm5, %%tmm2\n\t"
        "tdpbf16ps %%tmm7, %%tmm5, %%tmm3" ::: "memory");
  }
  __asm__ volatile("tilerelease" ::: "memory");
}

}  // namespace llmserve::kernels::cpu
