#pragma once
// splitmix64, the one copy: Mix64 is a fast bijective 64-bit mixer for seeds
// and hash keys (sampler seeds, prefix-affinity routing); SplitMix64Next is the
// generator built on it (random test weights, test payloads). Not cryptographic.

#include <cstdint>

namespace llmserve::base {

inline constexpr uint64_t kSplitMix64Increment = 0x9e3779b97f4a7c15ULL;

// The splitmix64 output function of state `x` (the increment added first).
inline uint64_t Mix64(uint64_t x) {
  x += kSplitMix64Increment;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Advances the generator state and returns its next 64 random bits.
inline uint64_t SplitMix64Next(uint64_t* state) {
  const uint64_t x = *state;
  *state += kSplitMix64Increment;
  return Mix64(x);
}

}  // namespace llmserve::base
