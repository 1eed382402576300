#pragma once
// When each benchmark request is sent, as vLLM's `bench serve` schedules them:
// with an infinite rate every request goes at time 0; otherwise the gaps
// between requests are drawn from a gamma distribution with shape
// `burstiness` and mean 1/rate (burstiness 1 = a Poisson process; below 1
// burstier, above 1 more even; infinite = a fixed gap of 1/rate). The first
// request also waits one gap. The running sum is then scaled so that the last
// request goes at exactly n / rate, which removes the seed-to-seed jitter of
// the total and keeps throughput figures comparable between seeds.

#include <cstdint>
#include <vector>

#include "base/status_or.h"

namespace llmserve::deploy::bench {

// Send times in seconds after the start, non-decreasing, one per request.
// `request_rate` > 0 (may be +inf); `burstiness` > 0 (may be +inf).
StatusOr<std::vector<double>> ArrivalTimes(size_t num_requests, double request_rate, double burstiness,
                                           uint64_t seed);

}  // namespace llmserve::deploy::bench
