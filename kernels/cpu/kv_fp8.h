#pragma once
// FP8 KV cache elements (--kv-cache-dtype fp8 / fp8_e4m3 / fp8_e5m2): the
// conversions the cache writer and the attention kernels run per element,
// equal bit for bit to base/float8.h's (which are written for clarity, not
// speed). vLLM's scaling: a cache holds x / scale, and reading gives back
// code × scale, with one scale per layer for K and one for V.

#include <array>
#include <cstdint>
#include <cstring>

#include "base/float8.h"

namespace llmserve::kernels::cpu {

// x narrowed to an fp8 format of kMantissaBits whose smallest normal value
// is 2^kMinExponent and largest finite one has bits kLargestBits as a float
// (code kLargestCode): nearest, ties to even, saturating (infinities too);
// NaN → 0x7f.
template <int kMantissaBits, int kMinExponent, uint32_t kLargestBits, uint8_t kLargestCode>
inline uint8_t EncodeFp8(float x) {
  constexpr uint32_t kMinNormalBits = static_cast<uint32_t>(127 + kMinExponent) << 23;
  constexpr float kSubnormalUnits = static_cast<float>(1u << (kMantissaBits - kMinExponent));  // 1 / spacing
  constexpr int kDropped = 23 - kMantissaBits;  // mantissa bits rounded away
  constexpr uint32_t kBias = 1 - kMinExponent;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;
  if (a >= kLargestBits) return sign | kLargestCode;
  if (a < kMinNormalBits) {  // subnormal: whole units of the spacing
    float f;
    std::memcpy(&f, &a, sizeof f);
    const float units = (f * kSubnormalUnits + 0x1p23f) - 0x1p23f;  // rounds to an integer, ties to even
    return sign | static_cast<uint8_t>(units);
  }
  // Round the mantissa, ties to even; a carry moves into the exponent.
  a += ((1u << (kDropped - 1)) - 1) + ((a >> kDropped) & 1u);
  const uint32_t exponent = (a >> 23) - (127 - kBias), mantissa = (a >> kDropped) & ((1u << kMantissaBits) - 1);
  const uint32_t code = (exponent << kMantissaBits) | mantissa;
  return sign | static_cast<uint8_t>(code > kLargestCode ? kLargestCode : code);
}

// E4M3: ±448 = 0x43e00000 at most. E5M2: ±57344 = 0x47600000.
inline uint8_t EncodeFp8E4M3(float x) { return EncodeFp8<3, -6, 0x43e00000u, 0x7e>(x); }
inline uint8_t EncodeFp8E5M2(float x) { return EncodeFp8<2, -14, 0x47600000u, 0x7b>(x); }

// Every code's value, for widening by table.
template <float (*Widen)(uint8_t)>
const std::array<float, 256>& Fp8Values() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int v = 0; v < 256; ++v) t[v] = Widen(static_cast<uint8_t>(v));
    return t;
  }();
  return table;
}

inline const std::array<float, 256>& Fp8E4M3Values() { return Fp8Values<base::Fp8E4M3ToFloat>(); }
inline const std::array<float, 256>& Fp8E5M2Values() { return Fp8Values<base::Fp8E5M2ToFloat>(); }

}  // namespace llmserve::kernels::cpu
