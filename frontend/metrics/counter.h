#pragma once
// Counter: one labelled series of a monotonically increasing total. Lock-free;
// safe from any thread.

#include <cmath>

#include "frontend/metrics/atomic_double.h"

namespace llmserve::frontend::metrics {

class Counter {
 public:
  // Adds `delta`. A negative or NaN delta is ignored: counters only grow.
  void Inc(double delta = 1.0) {
    if (delta > 0.0 && std::isfinite(delta)) value_.Add(delta);
  }
  // The total so far.
  double value() const { return value_.Get(); }

 private:
  AtomicDouble value_;
};

}  // namespace llmserve::frontend::metrics
