#pragma once
// Embedding lookup from a 16- or 32-bit table into fp32 rows.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {

// out[i][:] = table[ids[i]][:] widened to fp32, for n ids; table is row-major
// [vocab × dim] in `dtype`. Every id must be < vocab (CHECKed: callers validate).
void EmbeddingLookup(const void* table, WeightDType dtype, size_t vocab, size_t dim,
                     const int32_t* ids, size_t n, float* out, ThreadPool& pool);

// Widens `n` values of `dtype` at src to fp32.
void ConvertToF32(const void* src, WeightDType dtype, size_t n, float* out);

}  // namespace llmserve::kernels::cpu
