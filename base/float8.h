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

inline float Fp8E4M3ToFloat(uint8_t v) {
  const float sign = (v & 0x80) != 0 ? -1.f : 1.f;
  const int exponent = (v >> 3) & 0xf, mantissa = v & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::nanf("");
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m × 2^-9
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
}

inline uint8_t FloatToFp8E4M3(float f) {
  if (std::isnan(f)) return 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a >= 448.f) return sign | 0x7e;
  // The spacing of E4M3 values at `a`: 2^(e-3) for a in [2^e, 2^(e+1)), e ≥ -6;
  // 2^-9 below 2^-6 (subnormals). Rounding a / spacing to an integer (ties to
  // even, the default mode of nearbyint) picks the nearest value.
  int e = 0;
  std::frexp(a, &e);  // a = m × 2^e, m in [0.5, 1): a in [2^(e-1), 2^e)
  const int step = std::max(e - 1, -6) - 3;
  const float units = std::nearbyint(std::ldexp(a, -step));  // a in units of the spacing
  const float rounded = std::ldexp(units, step);
  if (rounded >= 448.f) return sign | 0x7e;
  if (rounded < 0x1p-6f) return sign | static_cast<uint8_t>(units);  // subnormal: units of 2^-9
  int re = 0;
  const float rm = std::frexp(rounded, &re);  // rounded = rm × 2^re, rm in [0.5, 1)
  const int mantissa = static_cast<int>(rm * 16.f) - 8;
  return sign | static_cast<uint8_t>(((re - 1 + 7) << 3) | mantissa);
}

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

inline uint8_t FloatToFp8E5M2(float f) {
  if (std::isnan(f)) return 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a >= 57344.f) return sign | 0x7b;
  // The spacing at `a`: 2^(e-2) for a in [2^e, 2^(e+1)), e ≥ -14; 2^-16 below 2^-14.
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int step = std::max(e - 1, -14) - 2;
  const float units = std::nearbyint(std::ldexp(a, -step));
  const float rounded = std::ldexp(units, step);
  if (rounded >= 57344.f) return sign | 0x7b;
  if (rounded < 0x1p-14f) return sign | static_cast<uint8_t>(units);  // subnormal: units of 2^-16
  int re = 0;
  const float rm = std::frexp(rounded, &re);  // rm in [0.5, 1)
  const int mantissa = static_cast<int>(rm * 8.f) - 4;
  return sign | static_cast<uint8_t>(((re - 1 + 15) << 2) | mantissa);
}

}  // namespace llmserve::base
