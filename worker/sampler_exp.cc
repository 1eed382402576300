#include "worker/sampler_exp.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
// GCC 12 reports its own _mm512_undefined_* helpers as maybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#endif

namespace llmserve::worker {
namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 with its low bits cleared
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
// Taylor coefficients 1/k! for k = 13 down to 0 (|r| <= ln2/2: truncation < 1e-17).
constexpr double kCoef[14] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                              1.0 / 362880.0,     1.0 / 40320.0,     1.0 / 5040.0,      1.0 / 720.0,
                              1.0 / 120.0,        1.0 / 24.0,        1.0 / 6.0,         0.5,
                              1.0,                1.0};

// One token of TemperatureExp (inv_temperature = 1 / temperature).
inline double TemperatureExpOne(float logit, double max, double inv_temperature, double floor_logit, double min_p) {
  const double l = static_cast<double>(logit);
  if (!(l >= floor_logit)) return 0.0;  // under the floor, or NaN
  const double e = SamplerExp((l - max) * inv_temperature);
  return e >= min_p ? e : 0.0;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512dq"))) void TemperatureExpAvx512(const float* logits, size_t n, double max,
                                                              double temperature, double floor_logit, double min_p,
                                                              double* p) {
  const __m512d vmax = _mm512_set1_pd(max), vinv = _mm512_set1_pd(1.0 / temperature);
  const __m512d vfloor = _mm512_set1_pd(floor_logit), vmin_p = _mm512_set1_pd(min_p);
  const __m512d log2e = _mm512_set1_pd(kLog2e), hi = _mm512_set1_pd(-kLn2Hi), lo = _mm512_set1_pd(-kLn2Lo);
  const __m512i bias = _mm512_set1_epi64(1023);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d l = _mm512_cvtps_pd(_mm256_loadu_ps(logits + i));
    // Lanes kept: at or above the floor (false for NaN).
    const __mmask8 live = _mm512_cmp_pd_mask(l, vfloor, _CMP_GE_OQ);
    if (live == 0) {
      _mm512_storeu_pd(p + i, _mm512_setzero_pd());
      continue;
    }
    const __m512d x = _mm512_mul_pd(_mm512_sub_pd(l, vmax), vinv);
    const __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fmadd_pd(k, hi, x);
    r = _mm512_fmadd_pd(k, lo, r);
    __m512d poly = _mm512_set1_pd(kCoef[0]);
    for (int c = 1; c < 14; ++c) poly = _mm512_fmadd_pd(poly, r, _mm512_set1_pd(kCoef[c]));
    // 2^k from its exponent bits; k stays well inside the normal range here.
    const __m512i ki = _mm512_cvtpd_epi64(k);
    const __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(ki, bias), 52));
    const __m512d e = _mm512_mul_pd(poly, scale);
    const __mmask8 keep = live & _mm512_cmp_pd_mask(e, vmin_p, _CMP_GE_OQ);
    _mm512_storeu_pd(p + i, _mm512_maskz_mov_pd(keep, e));
  }
  for (; i < n; ++i) p[i] = TemperatureExpOne(logits[i], max, 1.0 / temperature, floor_logit, min_p);
}

__attribute__((target("avx512f"))) float MaxLogitAvx512(const float* l, size_t n) {
  // max_ps(x, acc) keeps acc where x is NaN.
  __m512 acc = _mm512_set1_ps(-__builtin_inff());
  size_t i = 0;
  for (; i + 16 <= n; i += 16) acc = _mm512_max_ps(_mm512_loadu_ps(l + i), acc);
  float mx = _mm512_reduce_max_ps(acc);
  for (; i < n; ++i) {
    if (l[i] > mx) mx = l[i];
  }
  return mx;
}

__attribute__((target("avx512f"))) size_t ArgMaxAvx512(const float* l, size_t n) {
  // Pass 1: the maximum; pass 2: the first index holding it.
  const float mx = MaxLogitAvx512(l, n);
  const __m512 vmx = _mm512_set1_ps(mx);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __mmask16 eq = _mm512_cmp_ps_mask(_mm512_loadu_ps(l + i), vmx, _CMP_EQ_OQ);
    if (eq != 0) return i + static_cast<size_t>(__builtin_ctz(eq));
  }
  for (; i < n; ++i) {
    if (l[i] == mx) return i;
  }
  return 0;  // every logit is NaN or -inf
}

__attribute__((target("avx512f"))) size_t CountNansAvx512(const float* l, size_t n) {
  size_t count = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(l + i);
    count += static_cast<size_t>(__builtin_popcount(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)));
  }
  for (; i < n; ++i) count += std::isnan(l[i]) ? 1 : 0;
  return count;
}

bool HasAvx512Dq() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return has;
}
#endif

}  // namespace

size_t ArgMax(const float* l, size_t n) {
  // A NaN first element wins in the reference loop (nothing compares greater).
  if (n == 0 || std::isnan(l[0])) return 0;
#if defined(__x86_64__)
  if (HasAvx512Dq()) return ArgMaxAvx512(l, n);
#endif
  size_t best = 0;
  for (size_t t = 1; t < n; ++t) {
    if (l[t] > l[best]) best = t;
  }
  return best;
}

float MaxLogit(const float* l, size_t n) {
#if defined(__x86_64__)
  if (HasAvx512Dq()) return MaxLogitAvx512(l, n);
#endif
  float mx = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (l[i] > mx) mx = l[i];
  }
  return mx;
}

size_t CountNans(const float* l, size_t n) {
#if defined(__x86_64__)
  if (HasAvx512Dq()) return CountNansAvx512(l, n);
#endif
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += std::isnan(l[i]) ? 1 : 0;
  return count;
}

double SamplerExp(double x) {
  if (std::isnan(x)) return x;
  if (x < -700.0) return 0.0;  // below the range the sampler uses; keeps 2^k normal
  const double k = std::nearbyint(x * kLog2e);
  double r = std::fma(k, -kLn2Hi, x);
  r = std::fma(k, -kLn2Lo, r);
  double poly = kCoef[0];
  for (int c = 1; c < 14; ++c) poly = std::fma(poly, r, kCoef[c]);
  const uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(k) + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return poly * scale;
}

void TemperatureExp(const float* logits, size_t n, double max, double temperature, double floor_logit, double min_p,
                    double* p) {
#if defined(__x86_64__)
  if (HasAvx512Dq()) return TemperatureExpAvx512(logits, n, max, temperature, floor_logit, min_p, p);
#endif
  for (size_t i = 0; i < n; ++i) p[i] = TemperatureExpOne(logits[i], max, 1.0 / temperature, floor_logit, min_p);
}

}  // namespace llmserve::worker
