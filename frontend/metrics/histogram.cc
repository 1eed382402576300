#include "frontend/metrics/histogram.h"

#include <algorithm>
#include <cmath>

namespace llmserve::frontend::metrics {

Histogram::Histogram(std::shared_ptr<const std::vector<double>> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_->size() + 1, 0) {}

void Histogram::Observe(double value) {
  if (std::isnan(value)) return;
  // lower_bound: the first bound >= value, so a value equal to a bound counts in it ("le").
  const size_t bucket = static_cast<size_t>(std::lower_bound(bounds_->begin(), bounds_->end(), value) - bounds_->begin());
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[bucket];
  sum_ += value;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = *bounds_;
  s.cumulative.resize(counts_.size());
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t running = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    running += counts_[i];
    s.cumulative[i] = running;
  }
  s.count = running;
  s.sum = sum_;
  return s;
}

bool ValidBucketBounds(const std::vector<double>& bounds) {
  if (bounds.empty()) return false;
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) return false;
    if (i > 0 && !(bounds[i] > bounds[i - 1])) return false;
  }
  return true;
}

}  // namespace llmserve::frontend::metrics
