#pragma once
// Histogram: one labelled series of observations counted into fixed buckets
// (Prometheus "le" upper bounds, inclusive) plus their sum. Observe takes a
// per-series mutex, so a snapshot is always self-consistent: cumulative bucket
// counts never decrease and the +Inf bucket equals the count.

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace llmserve::frontend::metrics {

class Histogram {
 public:
  // A consistent copy of the series.
  struct Snapshot {
    std::vector<double> bounds;      // finite upper bounds, ascending (+Inf implied)
    std::vector<uint64_t> cumulative;  // bounds.size() + 1 counts; the last is +Inf
    double sum = 0.0;
    uint64_t count = 0;
  };

  // `bounds` must be finite and strictly ascending (Family checks this).
  explicit Histogram(std::shared_ptr<const std::vector<double>> bounds);

  // Counts `value` into the first bucket whose bound is >= value. NaN is ignored.
  void Observe(double value);

  // The bucket counts (cumulative), sum and count as of now.
  Snapshot snapshot() const;

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; last = above every bound
  double sum_ = 0.0;
};

// True when `bounds` is non-empty, finite and strictly ascending.
bool ValidBucketBounds(const std::vector<double>& bounds);

}  // namespace llmserve::frontend::metrics
