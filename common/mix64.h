#pragma once
// Mix64: the splitmix64 finalizer, a fast bijective 64-bit mixer for seeds and
// hash keys (sampler seeds, prefix-affinity routing). Not cryptographic.

#include <cstdint>

namespace llmserve::common {

inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace llmserve::common
