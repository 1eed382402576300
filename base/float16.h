#pragma once
// IEEE half (binary16) and bfloat16 to and from float32, exactly as the
// formats define them: widening is exact; narrowing rounds to nearest, ties to
// even, overflows to infinity, and keeps NaN a (quiet) NaN. Scalar and
// portable: the GGUF reader and the kernels that repack GGUF blocks use it.

#include <bit>
#include <cstdint>
#include <cstring>

namespace llmserve::base {

// The float32 equal to the half whose bits are `h`.
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa × 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// The half nearest to `f` (ties to even).
inline uint16_t FloatToHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;  // ≥ 65520 rounds to infinity
  const uint32_t exponent = magnitude >> 23;
  // Below 2^-14 the half is subnormal: count units of 2^-24, shifting the
  // float's 24-bit significand right by (126 - exponent) and rounding.
  const bool subnormal = exponent < 113;
  const uint32_t significand = (magnitude & 0x7fffffu) | (exponent != 0 ? 0x800000u : 0);
  const uint32_t shift = subnormal ? 126 - exponent : 13;
  if (shift > 24) return sign;  // below half the smallest subnormal: zero
  uint32_t half = subnormal ? significand >> shift
                            : ((exponent - 112) << 10) | ((magnitude & 0x7fffffu) >> 13);
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t midpoint = 1u << (shift - 1);
  if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

// The float32 equal to the bfloat16 whose bits are `b`.
inline float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// The bfloat16 nearest to `f` (ties to even).
inline uint16_t FloatToBf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// Little-endian loads and stores at any alignment.
inline uint16_t LoadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline void StoreU16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

}  // namespace llmserve::base
