#pragma once
// Moving a batch's sampled rows to the front of an activation buffer (the
// last layer runs on those rows alone past its K/V cache write).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmserve::worker {

// Whether indices are strictly increasing (so rows can be compacted in place).
inline bool StrictlyIncreasing(const std::vector<int32_t>& indices) {
  for (size_t i = 1; i < indices.size(); ++i) {
    if (indices[i] <= indices[i - 1]) return false;
  }
  return true;
}

// Row indices[i] of `data` (rows `stride` floats apart, the first `width`
// used) to row i. The indices strictly increase, so each row moves down
// onto one already used.
inline void MoveRowsToFront(float* data, size_t stride, size_t width, const std::vector<int32_t>& indices) {
  for (size_t i = 0; i < indices.size(); ++i) {
    const size_t src = static_cast<size_t>(indices[i]);
    if (src != i) std::copy_n(data + src * stride, width, data + i * stride);
  }
}

}  // namespace llmserve::worker
