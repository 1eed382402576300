#pragma once
// What the AVX2 kernels of the quantized GEMMs (gemm_q8_avx2.cc,
// gemm_q4k_avx2.cc, gemm_q6k_avx2.cc and the VNNI ones) share: the target
// attributes every function there carries (they are reached only after
// run-time dispatch), the sum of a group's 8 integer dot products, the read
// ahead of group blocks, and the store of a group's 8 output lanes into a row
// that may hold fewer.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#define LLMSERVE_AVX2 __attribute__((target("avx2,fma")))
#define LLMSERVE_AVX2_INLINE LLMSERVE_AVX2 __attribute__((always_inline)) inline

namespace llmserve::kernels::cpu {

// Lane j = the sum of the 8 lanes of p[j].
LLMSERVE_AVX2_INLINE __m256i SumLanes(const __m256i p[8]) {
  const __m256i q0123 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
  const __m256i q4567 = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(q0123, q4567, 0x20),
                          _mm256_permute2x128_si256(q0123, q4567, 0x31));
}

// Group blocks the K-quant kernels read ahead with software prefetches (into
// L2): the hardware prefetcher alone left decode waiting on memory at the
// start of each group block.
inline constexpr size_t kPrefetchGroupBlocks = 8;

// Prefetches (into L2) the group block kPrefetchGroupBlocks after `gb`, of
// `bytes` bytes (a multiple of 64).
LLMSERVE_AVX2_INLINE void PrefetchGroupBlockAhead(const uint8_t* gb, size_t bytes) {
  const uint8_t* ahead = gb + kPrefetchGroupBlocks * bytes;
  for (size_t at = 0; at < bytes; at += 64) _mm_prefetch(reinterpret_cast<const char*>(ahead + at), _MM_HINT_T1);
}

// y[0, min(width, 8)) = the 8 lanes of acc.
LLMSERVE_AVX2_INLINE void StoreGroupLanes(float* y, size_t width, __m256 acc) {
  if (width >= 8) {
    _mm256_storeu_ps(y, acc);
  } else {
    alignas(32) float out[8];
    _mm256_store_ps(out, acc);
    for (size_t j = 0; j < width; ++j) y[j] = out[j];
  }
}

}  // namespace llmserve::kernels::cpu
