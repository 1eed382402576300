#include "deploy/bench/arrivals.h"

#include <cmath>
#include <random>

namespace llmserve::deploy::bench {

StatusOr<std::vector<double>> ArrivalTimes(size_t num_requests, double request_rate, double burstiness,
                                           uint64_t seed) {
  if (!(request_rate > 0)) return Status::InvalidArgument("--request-rate must be positive (or inf)");
  if (!(burstiness > 0)) return Status::InvalidArgument("--burstiness must be positive");
  std::vector<double> times(num_requests, 0.0);
  if (std::isinf(request_rate) || num_requests == 0) return times;
  std::mt19937_64 rng(seed);
  std::gamma_distribution<double> gap(std::isinf(burstiness) ? 1.0 : burstiness,
                                      std::isinf(burstiness) ? 1.0 : 1.0 / (request_rate * burstiness));
  double t = 0;
  for (auto& at : times) {
    t += std::isinf(burstiness) ? 1.0 / request_rate : gap(rng);
    at = t;
  }
  if (times.back() > 0) {
    const double scale = (static_cast<double>(num_requests) / request_rate) / times.back();
    for (auto& at : times) at *= scale;
  }
  return times;
}

}  // namespace llmserve::deploy::bench
