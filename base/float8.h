#pragma once
// FP8 E4M3 ("e4m3fn", safetensors' F8_E4M3, torch.float8_e4m3fn): 1 sign,
// 4 exponent (bias 7) and 3 mantissa bits, no infinities, S.1111.111 is NaN,
// largest finite ±448. Widening is exact; narrowing rounds to nearest, ties
// to even, and saturates at ±448 (as FP8 checkpoints are written: scaled so
// that max|w| maps to 448).

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace llmserve::base {

namespace float8_internal {

// f narrowed to an fp8 format of `mantissa_bits`, whose smallest normal
// value is 2^min_exponent and largest finite value `largest` (code
// `largest_code`; larger magnitudes saturate to it): the nearest value, ties
// to even, as a code with its sign; NaN gives `nan_code`.
inline uint8_t Narrow(float f, int mantissa_bits, int min_exponent, float largest, uint8_t largest_code,
                      uint8_t nan_code) {
  if (std::isnan(f)) return nan_code;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a >= largest) return sign | largest_code;
  // The spacing of the format's values at `a`: 2^(e - mantissa_bits) for a in
  // [2^e, 2^(e+1)), e ≥ min_exponent; below 2^min_exponent (subnormals) that
  // of 2^min_exponent. Rounding a / spacing to an integer (ties to even, the
  // default mode of nearbyint) picks the nearest value.
  int e = 0;
  std::frexp(a, &e);  // a = m × 2^e, m in [0.5, 1): a in [2^(e-1), 2^e)
  const int step = std::max(e - 1, min_exponent) - mantissa_bits;
  const float units = std::nearbyint(std::ldexp(a, -step));  // a in units of the spacing
  const float rounded = std::ldexp(units, step);
  if (rounded >= largest) return sign | largest_code;
  if (rounded < std::ldexp(1.f, min_exponent)) return sign | static_cast<uint8_t>(units);  // subnormal
  int re = 0;
  const float rm = std::frexp(rounded, &re);  // rounded = rm × 2^re, rm in [0.5, 1)
  const int implicit = 1 << mantissa_bits;
  const int mantissa = static_cast<int>(std::ldexp(rm, mantissa_bits + 1)) - implicit;
  const int bias = 1 - min_exponent;
  return sign | static_cast<uint8_t>(((re - 1 + bias) << mantissa_bits) | mantissa);
}

}  // namespace float8_internal

inline float Fp8E4M3ToFloat(uint8_t v) {
  const float sign = (v & 0x80) != 0 ? -1.f : 1.f;
  const int exponent = (v >> 3) & 0xf, mantissa = v & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m × 2^-9
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

inline uint8_t FloatToFp8E4M3(float f) { return float8_internal::Narrow(f, 3, -6, 448.f, 0x7e, 0x7f); }

// FP8 E5M2 (torch.float8_e5m2): 1 sign, 5 exponent (bias 15) and 2 mantissa
// bits, IEEE-style infinities and NaNs, largest finite ±57344. Widening is
// exact; narrowing rounds to nearest, ties to even, and saturates finite
// values and infinities at ±57344 (CUDA's __NV_SATFINITE, which vLLM's fp8
// KV cache writes with).

inline float Fp8E5M2ToFloat(uint8_t v) {
  const float sign = (v & 0x80) != 0 ? -1.f : 1.f;
  const int exponent = (v >> 2) & 0x1f, mantissa = v & 0x3;
  if (exponent == 0x1f) return mantissa == 0 ? sign * INFINITY : std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -16);  // subnormal: m × 2^-16
  return sign * std::ldexp(static_cast<float>(4 + mantissa), exponent - 17);
}

inline uint8_t FloatToFp8E5M2(float f) { return float8_internal::Narrow(f, 2, -14, 57344.f, 0x7b, 0x7f); }

}  // namespace llmserve::base
