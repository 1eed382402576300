#include "engine_core/step_overhead.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

namespace llmserve::engine_core {

std::chrono::nanoseconds ThreadCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

void StepOverhead::Add(std::chrono::nanoseconds total, std::chrono::nanoseconds execute, size_t batch) {
  ++steps_;
  batch_sum_ += batch;
  total_ns_ += static_cast<double>(total.count());
  execute_ns_ += static_cast<double>(execute.count());
  const int64_t overhead_us = std::max<int64_t>(0, (total - execute).count() / 1000);
  ++histogram_[static_cast<size_t>(std::min<int64_t>(overhead_us, kBuckets - 1))];
}

double StepOverhead::MeanOverheadMicros() const {
  return steps_ == 0 ? 0.0 : (total_ns_ - execute_ns_) / static_cast<double>(steps_) / 1000.0;
}

double StepOverhead::OverheadQuantileMicros(double q) const {
  if (steps_ == 0) return 0.0;
  const auto rank = static_cast<uint64_t>(q * static_cast<double>(steps_ - 1));
  uint64_t seen = 0;
  for (size_t us = 0; us < kBuckets; ++us) {
    seen += histogram_[us];
    if (seen > rank) return static_cast<double>(us);
  }
  return static_cast<double>(kBuckets - 1);
}

double StepOverhead::MeanCpuOverheadMicros() const {
  return steps_ == 0 ? 0.0 : overhead_cpu_ns_ / static_cast<double>(steps_) / 1000.0;
}

std::string StepOverhead::Summary() const {
  if (steps_ == 0) return "no steps";
  const double n = static_cast<double>(steps_);
  char text[400];
  std::snprintf(text, sizeof(text),
                "%llu steps (mean batch %.1f): per step %.1f us total, %.1f us model execution, overhead beyond "
                "compute mean %.1f us (p50 %.0f, p90 %.0f, p99 %.0f); its CPU time mean %.1f us",
                static_cast<unsigned long long>(steps_), static_cast<double>(batch_sum_) / n, total_ns_ / n / 1000.0,
                execute_ns_ / n / 1000.0, MeanOverheadMicros(), OverheadQuantileMicros(0.5),
                OverheadQuantileMicros(0.9), OverheadQuantileMicros(0.99), MeanCpuOverheadMicros());
  return text;
}

}  // namespace llmserve::engine_core
