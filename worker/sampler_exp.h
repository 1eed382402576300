#pragma once
// Vectorised scans of logit rows for the sampler: greedy argmax, maximum, NaN count,
// and the temperature softmax numerators: for each token t,
// p[t] = exp((logits[t] - max) / temperature), or 0 when logits[t] is under
// floor_logit or NaN or that value is under min_p (the dividing is a multiply
// by 1 / temperature).
//
// exp here is our own (range reduction by ln 2 in two parts, a degree-13
// polynomial, scaling by 2^n), accurate to about 1 ulp for the arguments the
// sampler passes (-30 * a little to 0). The AVX-512 path and the portable
// path run the same IEEE operations in the same order (fma included), so p is
// bitwise the same on every machine; at a 152k vocabulary the AVX-512 path
// is several times faster than calling std::exp per token.

#include <cstddef>

namespace llmserve::worker {

// Fills p[0, n) as described above.
void TemperatureExp(const float* logits, size_t n, double max, double temperature, double floor_logit, double min_p,
                    double* p);

// Index of the first maximum of logits[0, n) (n > 0), skipping NaNs as the
// loop `if (l[t] > l[best]) best = t` does (so a NaN at index 0 gives 0).
size_t ArgMax(const float* logits, size_t n);

// The largest of logits[0, n), NaNs skipped (-inf when there is none).
float MaxLogit(const float* logits, size_t n);

// Number of NaNs in logits[0, n).
size_t CountNans(const float* logits, size_t n);

// The scalar exp TemperatureExp uses, for x in about [-45, 0] (tests compare it with std::exp).
double SamplerExp(double x);

}  // namespace llmserve::worker
