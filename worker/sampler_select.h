#pragma once
// Linear-time selections over one row of the sampler: top-k and top-p as cuts
// in the row's best-first order, and the draw.
//
// Best-first order: higher (processed) logit first, then lower token id. The
// probabilities p the sampler draws from never increase along it (p is a
// monotone function of the logit), so every truncation the sampler applies
// (top-k, top-p) keeps the tokens at or before one position, a `Cut`, and
// drops the others by zeroing their p.
//
// Everything here is a fixed sequence of operations on the row alone, so a
// row samples the same token whatever else is in the batch, on every machine.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace llmserve::worker {

// A position in the best-first order.
struct Cut {
  float logit;
  int32_t token;
};

// Whether token t with logit l is at or before `cut` in the best-first order.
inline bool AtOrBefore(float l, int32_t t, Cut cut) { return l > cut.logit || (l == cut.logit && t <= cut.token); }

// The best k tokens of `logits` in best-first order (fewer if fewer than k
// logits are above -inf; NaNs never count), as (logit, token) pairs.
std::vector<std::pair<float, int32_t>> TopK(const float* logits, size_t n, size_t k);

// p[t] = 0 for every token t that is not at or before `cut`.
void DropAfter(const float* logits, size_t n, Cut cut, double* p);

// The cut of the shortest best-first run of tokens with p > 0 whose p sums to
// at least `want` (the last such token when rounding leaves the whole row
// short). All tokens with p > 0 must have logits in [lo, hi].
Cut TopPCut(const float* logits, const double* p, size_t n, double want, float lo, float hi);

// The sampler's draw from p >= 0 (not all zero): the token whose interval of
// the running sum of p in token-id order holds u * total, u in [0, 1). Sums
// go through fixed 256-token chunks, so the draw skips whole chunks.
class Draw {
 public:
  // Sums p in chunks (fixed lane order).
  Draw(const double* p, size_t n);

  // Sum of p over the row.
  double total() const { return total_; }

  // The token for u in [0, 1).
  int32_t Pick(double u) const;

 private:
  const double* p_;
  size_t n_;
  std::vector<double> chunk_sums_;
  double total_ = 0;
};

}  // namespace llmserve::worker
