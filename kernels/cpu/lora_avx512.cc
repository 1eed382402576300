// AVX-512 blocks of the LoRA update (kernels/cpu/lora.h): 16 rank lanes or
// 16 output columns per zmm, up to four zmm wide, up to four rows sharing
// each factor load. Tails use masked loads and stores; bf16 factors are
// widened to fp32 as they are loaded.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_* helpers as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cstdint>

#include "kernels/cpu/avx512_mask.h"
#include "kernels/cpu/lora_blocks.h"

#define LLMSERVE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#define LLMSERVE_AVX512_INLINE LLMSERVE_AVX512 __attribute__((always_inline)) inline

namespace llmserve::kernels::cpu::lora {
namespace {

// 16 factor elements from p (the lanes of `m` only; the others zero), as fp32.
LLMSERVE_AVX512_INLINE __m512 Load16(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
LLMSERVE_AVX512_INLINE __m512 Load16(const uint16_t* p, __mmask16 m) {
  const __m256i h = _mm256_maskz_loadu_epi16(m, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
LLMSERVE_AVX512_INLINE __m512 Load16(const float* p) { return _mm512_loadu_ps(p); }
LLMSERVE_AVX512_INLINE __m512 Load16(const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// t[r][c0 .. c0 + lanes) = scale · A[c0 ..]·x[r], NV zmm of rank lanes, the
// last one holding `last` lanes.
template <typename T, int MR, int NV>
LLMSERVE_AVX512 void Shrink(const LoraFactors& f, const float* const* x, float* t, size_t c0, size_t last) {
  const __mmask16 tail = LowMask(last);
  __m512 acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const T* a = static_cast<const T*>(f.a_t) + c0;
  for (size_t k = 0; k < f.in; ++k, a += f.rank) {
    __m512 av[NV];
    for (int v = 0; v < NV; ++v) av[v] = v == NV - 1 ? Load16(a + 16 * v, tail) : Load16(a + 16 * v);
    for (int r = 0; r < MR; ++r) {
      const __m512 xk = _mm512_set1_ps(x[r][k]);
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av[v], xk, acc[r][v]);
    }
  }
  const __m512 scale = _mm512_set1_ps(f.scale);
  // (A mask chosen per v would keep GCC from holding acc in registers.)
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    float* tr = t + r * kMaxLoraRank + c0;
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(tr + 16 * v, _mm512_mul_ps(acc[r][v], scale));
    _mm512_mask_storeu_ps(tr + 16 * (NV - 1), tail, _mm512_mul_ps(acc[r][NV - 1], scale));
  }
}

// y[r][j0 ..] += (Bᵀ columns j0 ..)·t[r], NV zmm of columns, the last one
// holding `last` columns.
template <typename T, int MR, int NV>
LLMSERVE_AVX512 void Expand(const LoraFactors& f, const float* t, float* const* y, size_t j0, size_t last) {
  const __mmask16 tail = LowMask(last);
  const size_t rank = f.rank, out = f.out;
  __m512 acc[MR][NV];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      acc[r][v] = v == NV - 1 ? _mm512_maskz_loadu_ps(tail, y[r] + j0 + 16 * v) : _mm512_loadu_ps(y[r] + j0 + 16 * v);
    }
  }
  // Each rank term reads one 64-column run of a different row of Bᵀ: the
  // run two steps of j0 ahead is requested now, as no hardware prefetcher
  // follows rank-many strided streams.
  const T* b = static_cast<const T*>(f.b_t) + j0;
  for (size_t i = 0; i < rank; ++i, b += out) {
#pragma GCC unroll 4
    for (size_t line = 0; line < sizeof(T); ++line) {
      _mm_prefetch(reinterpret_cast<const char*>(b + 128) + 64 * line, _MM_HINT_T0);
    }
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = v == NV - 1 ? Load16(b + 16 * v, tail) : Load16(b + 16 * v);
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m512 ti = _mm512_set1_ps(t[r * kMaxLoraRank + i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(bv[v], ti, acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    float* yr = y[r] + j0;
#pragma GCC unroll 4
    for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(yr + 16 * v, acc[r][v]);
    _mm512_mask_storeu_ps(yr + 16 * (NV - 1), tail, acc[r][NV - 1]);
  }
}

// Op(start, lanes in its last zmm) over n lanes in steps of up to 4 zmm.
template <typename T, int MR, bool kShrink, typename P, typename Q>
LLMSERVE_AVX512 void Walk(size_t n, const LoraFactors& f, P in, Q out) {
  auto op = [&]<int NV>(size_t c, size_t last) LLMSERVE_AVX512 {
    if constexpr (kShrink) {
      Shrink<T, MR, NV>(f, in, out, c, last);
    } else {
      Expand<T, MR, NV>(f, in, out, c, last);
    }
  };
  size_t c = 0;
  for (; c + 64 <= n; c += 64) op.template operator()<4>(c, 16);
  const size_t rest = n - c;
  if (rest == 0) return;
  const size_t nv = (rest + 15) / 16, last = rest - 16 * (nv - 1);
  switch (nv) {
    case 1: op.template operator()<1>(c, last); break;
    case 2: op.template operator()<2>(c, last); break;
    case 3: op.template operator()<3>(c, last); break;
    default: op.template operator()<4>(c, last); break;
  }
}

template <typename T, int MR>
LLMSERVE_AVX512 void Rows(const LoraFactors& f, const float* const* x, float* const* y) {
  alignas(64) float t[MR * kMaxLoraRank];
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

void BlockAvx512(const LoraFactors& f, const float* const* x, float* const* y, size_t m) {
  if (f.dtype == LoraDType::kBF16) {
    Block<uint16_t>(f, x, y, m);
  } else {
    Block<float>(f, x, y, m);
  }
}

}  // namespace llmserve::kernels::cpu::lora
