#pragma once
// The pooling runner's per-request state: one prompt's final hidden states
// reduced to one vector as its prefill chunks run (vLLM's LAST, MEAN and CLS
// pooling). MEAN adds the rows in position order in double precision, so the
// vector does not depend on how the prompt was chunked or batched.

#include <cstddef>
#include <string_view>
#include <vector>

#include "base/status_or.h"

namespace llmserve::worker {

enum class PoolingType { kLast, kMean, kCls };

// "LAST", "MEAN" or "CLS" (vLLM's spelling, any case); others are InvalidArgument.
StatusOr<PoolingType> ParsePoolingType(std::string_view name);

// The prompt positions [first, first + count) a chunk's hidden states are needed for.
struct PooledRows {
  size_t first = 0;
  size_t count = 0;
};

class PromptPooler {
 public:
  PromptPooler(PoolingType type, size_t hidden_size, size_t prompt_len)
      : type_(type), hidden_size_(hidden_size), prompt_len_(prompt_len) {}

  // The rows of the chunk of prompt positions [start, start + n) this pooling reads.
  PooledRows RowsOf(size_t start, size_t n) const;
  // Takes the rows RowsOf(start, n) named, `rows` of hidden_size floats each,
  // in position order, and returns how many that was. A chunk at position 0
  // starts over (a recompute after preemption).
  size_t Add(size_t start, size_t n, const float* rows);
  // Whether the chunk [start, start + n) ends the prompt.
  bool Finishes(size_t start, size_t n) const { return start + n == prompt_len_; }
  // The pooled vector (hidden_size floats); call once the prompt is done.
  std::vector<float> Take() const;

 private:
  PoolingType type_;
  size_t hidden_size_;
  size_t prompt_len_;
  std::vector<double> sum_;    // MEAN: the rows added so far
  std::vector<float> picked_;  // LAST / CLS: the row
};

}  // namespace llmserve::worker
