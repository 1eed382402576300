#pragma once
// The target attributes of the VNNI kernels (vpdpbusd on ymm, which needs
// AVX-512 VL and VNNI: gemm_q8_vnni.cc, gemm_q4k_vnni.cc, gemm_q6k_vnni.cc);
// they are reached only after run-time dispatch on CpuFeatures::avx512 and
// avx512_vnni. Also the 4-byte broadcast they feed vpdpbusd with.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#define LLMSERVE_AVX512_VNNI __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#define LLMSERVE_AVX512_VNNI_INLINE LLMSERVE_AVX512_VNNI __attribute__((always_inline)) inline

namespace llmserve::kernels::cpu {

// The 4 bytes at p in every 32-bit lane.
LLMSERVE_AVX512_VNNI_INLINE __m256i Broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

}  // namespace llmserve::kernels::cpu
