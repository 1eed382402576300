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

// x narrowed to E4M3, nearest and ties to even, saturating at ±448; NaN → 0x7f.
inline uint8_t EncodeFp8E4M3(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;
  if (a >= 0x43e00000u) return sign | 0x7e;  // ≥ 448 (infinity too)
  if (a < 0x3c800000u) {                     // below 2^-6: units of 2^-9, 0..8
    float f;
    std::memcpy(&f, &a, sizeof f);
    const float units = (f * 512.f + 0x1p23f) - 0x1p23f;  // rounds to an integer, ties to even
    return sign | static_cast<uint8_t>(units);
  }
  // Round the 23 mantissa bits to 3, ties to even; a carry moves into the exponent.
  a += 0x7ffffu + ((a >> 20) & 1u);
  const uint32_t code = (((a >> 23) - 120u) << 3) | ((a >> 20) & 7u);  // exponent bias 127 → 7
  return sign | static_cast<uint8_t>(code > 0x7eu ? 0x7eu : code);
}

// x narrowed to E5M2, nearest and ties to even, saturating at ±57344
// (infinities too); NaN → 0x7f.
inline uint8_t EncodeFp8E5M2(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7f;
  if (a >= 0x47600000u) return sign | 0x7b;  // ≥ 57344
  if (a < 0x38800000u) {                     // below 2^-14: units of 2^-16, 0..4
    float f;
    std::memcpy(&f, &a, sizeof f);
    const float units = (f * 65536.f + 0x1p23f) - 0x1p23f;
    return sign | static_cast<uint8_t>(units);
  }
  a += 0xfffffu + ((a >> 21) & 1u);
  const uint32_t code = (((a >> 23) - 112u) << 2) | ((a >> 21) & 3u);  // exponent bias 127 → 15
  return sign | static_cast<uint8_t>(code > 0x7bu ? 0x7bu : code);
}

// Every code's value, for widening by table.
inline const std::array<float, 256>& Fp8E4M3Values() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int v = 0; v < 256; ++v) t[v] = base::Fp8E4M3ToFloat(static_cast<uint8_t>(v));
    return t;
  }();
  return table;
}

inline const std::array<float, 256>& Fp8E5M2Values() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int v = 0; v < 256; ++v) t[v] = base::Fp8E5M2ToFloat(static_cast<uint8_t>(v));
    return t;
  }();
  return table;
}

}  // namespace llmserve::kernels::cpu
