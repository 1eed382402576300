#pragma once
// A double that many threads may add to or set without a lock (a
// compare-exchange loop; std::atomic<double>::fetch_add is C++20 but not in
// every standard library we build with).

#include <atomic>

namespace llmserve::frontend::metrics {

class AtomicDouble {
 public:
  // Adds `delta` atomically.
  void Add(double delta) {
    double old = value_.load(std::memory_order_relaxed);
    while (!value_.compare_exchange_weak(old, old + delta, std::memory_order_relaxed)) {
    }
  }
  // Replaces the value.
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  // The current value.
  double Get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

}  // namespace llmserve::frontend::metrics
