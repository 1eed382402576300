// AVX2 + FMA blocks of the LoRA update (kernels/cpu/lora.h), for CPUs
// without AVX-512: 8 rank lanes or 8 output columns per ymm, two ymm
// wide, up to four rows sharing each factor load. Tails use masked loads and
// stores (bf16 tails go through a zeroed copy); bf16 factors are widened to
// fp32 as they are loaded.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/lora_blocks.h"

#define LLMSERVE_AVX2 __attribute__((target("avx2,fma")))
#define LLMSERVE_AVX2_INLINE LLMSERVE_AVX2 __attribute__((always_inline)) inline

namespace llmserve::kernels::cpu::lora {
namespace {

// The mask of the first n of 8 lanes (all 8 when n >= 8).
struct Tail {
  __m256i mask;
  size_t n;
};
LLMSERVE_AVX2_INLINE Tail LowMask(size_t n) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return {_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n < 8 ? n : 8)), lane), n < 8 ? n : 8};
}

LLMSERVE_AVX2_INLINE __m256 Widen8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// 8 factor elements from p (the first tail.n only; the others zero), as fp32.
LLMSERVE_AVX2_INLINE __m256 Load8(const float* p, const Tail& tail) { return _mm256_maskload_ps(p, tail.mask); }
LLMSERVE_AVX2_INLINE __m256 Load8(const uint16_t* p, const Tail& tail) {
  uint16_t copy[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(copy, p, tail.n * sizeof(uint16_t));
  return Widen8(copy);
}
LLMSERVE_AVX2_INLINE __m256 Load8(const float* p) { return _mm256_loadu_ps(p); }
LLMSERVE_AVX2_INLINE __m256 Load8(const uint16_t* p) { return Widen8(p); }

// t[r][c0 .. c0 + lanes) = scale · A[c0 ..]·x[r], NV ymm of rank lanes, the
// last one holding `last` lanes.
template <typename T, int MR, int NV>
LLMSERVE_AVX2 void Shrink(const LoraFactors& f, const float* const* x, float* t, size_t c0, size_t last) {
  const Tail tail = LowMask(last);
  __m256 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  const T* a = static_cast<const T*>(f.a_t) + c0;
  for (size_t k = 0; k < f.in; ++k, a += f.rank) {
    __m256 av[NV];
    for (int v = 0; v < NV; ++v) av[v] = v == NV - 1 ? Load8(a + 8 * v, tail) : Load8(a + 8 * v);
    for (int r = 0; r < MR; ++r) {
      const __m256 xk = _mm256_set1_ps(x[r][k]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av[v], xk, acc[r][v]);
    }
  }
  const __m256 scale = _mm256_set1_ps(f.scale);
  // (A mask chosen per v would keep GCC from holding acc in registers.)
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    float* tr = t + r * kMaxLoraRank + c0;
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; ++v) _mm256_storeu_ps(tr + 8 * v, _mm256_mul_ps(acc[r][v], scale));
    _mm256_maskstore_ps(tr + 8 * (NV - 1), tail.mask, _mm256_mul_ps(acc[r][NV - 1], scale));
  }
}

// y[r][j0 ..] += (Bᵀ columns j0 ..)·t[r], NV ymm of columns, the last one
// holding `last` columns.
template <typename T, int MR, int NV>
LLMSERVE_AVX2 void Expand(const LoraFactors& f, const float* t, float* const* y, size_t j0, size_t last) {
  const Tail tail = LowMask(last);
  __m256 acc[MR][NV];
  for (int r = 0; r < MR; ++r) {
    for (int v = 0; v < NV; ++v) {
      acc[r][v] = v == NV - 1 ? _mm256_maskload_ps(y[r] + j0 + 8 * v, tail.mask) : _mm256_loadu_ps(y[r] + j0 + 8 * v);
    }
  }
  const T* b = static_cast<const T*>(f.b_t) + j0;
  for (size_t i = 0; i < f.rank; ++i, b += f.out) {
    __m256 bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = v == NV - 1 ? Load8(b + 8 * v, tail) : Load8(b + 8 * v);
    for (int r = 0; r < MR; ++r) {
      const __m256 ti = _mm256_set1_ps(t[r * kMaxLoraRank + i]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(bv[v], ti, acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    float* yr = y[r] + j0;
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; ++v) _mm256_storeu_ps(yr + 8 * v, acc[r][v]);
    _mm256_maskstore_ps(yr + 8 * (NV - 1), tail.mask, acc[r][NV - 1]);
  }
}

// Op(start, lanes in its last ymm) over n lanes in steps of 2 ymm (four rows
// of 4 ymm would need every one of the 16 ymm registers for accumulators).
template <typename T, int MR, bool kShrink, typename P, typename Q>
LLMSERVE_AVX2 void Walk(size_t n, const LoraFactors& f, P in, Q out) {
  auto op = [&]<int NV>(size_t c, size_t last) LLMSERVE_AVX2 {
    if constexpr (kShrink) {
      Shrink<T, MR, NV>(f, in, out, c, last);
    } else {
      Expand<T, MR, NV>(f, in, out, c, last);
    }
  };
  size_t c = 0;
  for (; c + 16 <= n; c += 16) op.template operator()<2>(c, 8);
  const size_t rest = n - c;
  if (rest == 0) return;
  if (rest > 8) {
    op.template operator()<2>(c, rest - 8);
  } else {
    op.template operator()<1>(c, rest);
  }
}

template <typename T, int MR>
LLMSERVE_AVX2 void Rows(const LoraFactors& f, const float* const* x, float* const* y) {
  alignas(32) float t[MR * kMaxLoraRank];
  Walk<T, MR, true>(f.rank, f, x, static_cast<float*>(t));
  Walk<T, MR, false>(f.out, f, static_cast<const float*>(t), y);
}

template <typename T>
void Block(const LoraFactors& f, const float* const* x, float* const* y, size_t m) {
  switch (m) {
    case 1: Rows<T, 1>(f, x, y); break;
    case 2: Rows<T, 2>(f, x, y); break;
    case 3: Rows<T, 3>(f, x, y); break;
    default: Rows<T, 4>(f, x, y); break;
  }
}

}  // namespace

void BlockAvx2(const LoraFactors& f, const float* const* x, float* const* y, size_t m) {
  if (f.dtype == LoraDType::kBF16) {
    Block<uint16_t>(f, x, y, m);
  } else {
    Block<float>(f, x, y, m);
  }
}

}  // namespace llmserve::kernels::cpu::lora
