#include "worker/random_weights.h"

#include <cmath>
#include <cstring>

#include "base/mix64.h"
#include "kernels/cpu/linear.h"

namespace llmserve::worker {

namespace {

uint64_t NameHash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// fp32 -> IEEE half, round to nearest even (no NaN inputs here).
uint16_t F32ToF16(float value) {
  uint32_t u;
  std::memcpy(&u, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const int32_t exp = static_cast<int32_t>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffff;
  if (exp >= 31) return sign | 0x7c00;  // overflow to inf
  if (exp <= 0) {                       // subnormal or zero
    if (exp < -10) return sign;
    mant |= 0x800000;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: correct
  return sign | static_cast<uint16_t>(half);
}

}  // namespace

void Normals(uint64_t seed, const std::string& name, double mean, double std, size_t n, float* out) {
  uint64_t state = seed * base::kSplitMix64Increment ^ NameHash(name);
  for (size_t i = 0; i < n; i += 2) {
    const double u1 = (static_cast<double>(base::SplitMix64Next(&state) >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(base::SplitMix64Next(&state) >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    out[i] = static_cast<float>(mean + std * r * std::cos(2 * M_PI * u2));
    if (i + 1 < n) out[i + 1] = static_cast<float>(mean + std * r * std::sin(2 * M_PI * u2));
  }
}

void Encode(const std::vector<float>& v, const std::string& dtype, uint8_t* out) {
  if (dtype == "F32") {
    std::memcpy(out, v.data(), v.size() * 4);
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t b;
    if (dtype == "BF16") {
      b = kernels::cpu::F32ToBf16(v[i]);
    } else {
      b = F32ToF16(v[i]);
    }
    std::memcpy(out + 2 * i, &b, 2);
  }
}

}  // namespace llmserve::worker
