#pragma once
// Seeded random weights for generated checkpoints and adapters: each
// tensor's values depend only on (seed, tensor name).

#include <cstdint>
#include <string>
#include <vector>

namespace llmserve::worker {

// n normals ~ N(mean, std²) from a stream seeded by (seed, name), Box–Muller.
void Normals(uint64_t seed, const std::string& name, double mean, double std, size_t n, float* out);

// v as safetensors `dtype` ("F32", "BF16" or "F16"; round to nearest even) into out.
void Encode(const std::vector<float>& v, const std::string& dtype, uint8_t* out);

}  // namespace llmserve::worker
