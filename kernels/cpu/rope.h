#pragma once
// Rotary position embedding (the Hugging Face "rotate_half" / NeoX layout: the
// pairs are (i, i + rotary_dim/2)), with the rope_scaling variants of HF's
// modeling_rope_utils: default, linear, llama3 and yarn.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// rope_scaling from config.json.
struct RopeScaling {
  enum class Type { kNone, kLinear, kLlama3, kYarn };
  Type type = Type::kNone;
  double factor = 1.0;                    // linear, llama3, yarn
  double low_freq_factor = 1.0;           // llama3
  double high_freq_factor = 4.0;          // llama3
  double original_max_position = 8192;    // llama3, yarn
  double beta_fast = 32.0;                // yarn
  double beta_slow = 1.0;                 // yarn
  double mscale = 0.0;                    // yarn (0 = absent)
  double mscale_all_dim = 0.0;            // yarn (0 = absent)
  double attention_factor = 0.0;          // yarn (0 = derive from factor)
  bool truncate = true;                   // yarn
};

// Inverse frequencies (rotary_dim/2 of them) and the factor cos/sin are scaled by.
struct RopeFrequencies {
  std::vector<float> inv_freq;
  float attention_scaling = 1.0f;
};

// Computes inv_freq = theta^(-2i/rotary_dim), adjusted by `scaling`.
RopeFrequencies ComputeRopeFrequencies(size_t rotary_dim, double theta, const RopeScaling& scaling);

// cos/sin for a set of positions: row t holds rotary_dim/2 values for positions[t].
struct RopeTable {
  size_t half = 0;
  std::vector<float> cos;  // [tokens × half]
  std::vector<float> sin;  // [tokens × half]
};

// Fills the table for `n` positions (angle = position * inv_freq, computed in double).
void BuildRopeTable(const RopeFrequencies& freqs, const int32_t* positions, size_t n,
                    RopeTable* table);

// Rotates, in place, `heads` heads of `head_dim` floats for each of `tokens`
// tokens: token t's heads start at x + t * token_stride. Only the first
// 2 * table.half dims of each head rotate.
void ApplyRope(float* x, size_t tokens, size_t token_stride, size_t heads, size_t head_dim,
               const RopeTable& table, ThreadPool& pool);

// ApplyRope for one token: rotates `heads` heads (head_dim apart from x) by
// row `token` of the table. The same bits as ApplyRope (AVX-512 where
// ActiveIsa() allows: the same multiplies and adds per element, no FMA).
void ApplyRopeToken(float* x, size_t heads, size_t head_dim, const RopeTable& table, size_t token);

// Scalar reference: rotates one head vector at `position`.
void ApplyRopeReference(float* head, size_t head_dim, const RopeFrequencies& freqs,
                        int32_t position);

}  // namespace llmserve::kernels::cpu
