#pragma once
// Gauge: one labelled series of a value that goes up and down. Lock-free;
// safe from any thread.

#include "frontend/metrics/atomic_double.h"

namespace llmserve::frontend::metrics {

class Gauge {
 public:
  // Replaces the value.
  void Set(double value) { value_.Set(value); }
  // Adds `delta` (may be negative).
  void Add(double delta) { value_.Add(delta); }
  // The current value.
  double value() const { return value_.Get(); }

 private:
  AtomicDouble value_;
};

}  // namespace llmserve::frontend::metrics
