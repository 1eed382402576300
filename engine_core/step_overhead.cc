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
  Count(histogram_, (total - execute).count() / 1000);
}

void StepOverhead::AddCpu(std::chrono::nanoseconds overhead_cpu) {
  ++cpu_steps_;
  overhead_cpu_ns_ += static_cast<double>(overhead_cpu.count());
  Count(cpu_histogram_, overhead_cpu.count() / 1000);
}

void StepOverhead::Count(Histogram& h, int64_t micros) {
  ++h[static_cast<size_t>(std::clamp<int64_t>(micros, 0, kBuckets - 1))];
}

double StepOverhead::MeanOverheadMicros() const {
  return steps_ == 0 ? 0.0 : (total_ns_ - execute_ns_) / static_cast<double>(steps_) / 1000.0;
}

double StepOverhead::OverheadQuantileMicros(double q) const { return Quantile(histogram_, q); }

double StepOverhead::CpuQuantileMicros(double q) const { return Quantile(cpu_histogram_, q); }

double StepOverhead::Quantile(const Histogram& h, double q) const {
  uint64_t count = 0;
  for (uint32_t c : h) count += c;
  if (count == 0) return 0.0;
  const auto rank = static_cast<uint64_t>(q * static_cast<double>(count - 1));
  uint64_t seen = 0;
  for (size_t us = 0; us < kBuckets; ++us) {
    seen += h[us];
    if (seen > rank) return static_cast<double>(us);
  }
  return static_cast<double>(kBuckets - 1);
}

double StepOverhead::MeanCpuOverheadMicros() const {
  return cpu_steps_ == 0 ? 0.0 : overhead_cpu_ns_ / static_cast<double>(cpu_steps_) / 1000.0;
}

std::string StepOverhead::Summary() const {
  if (steps_ == 0) return "no steps";
  const double n = static_cast<double>(steps_);
  char text[400];
  std::snprintf(text, sizeof(text),
                "%llu steps (mean batch %.1f): per step %.1f us total, %.1f us model execution, overhead beyond "
                "compute mean %.1f us (p50 %.0f, p90 %.0f, p99 %.0f); its CPU time mean %.1f us (p50 %.0f, p90 %.0f)",
                static_cast<unsigned long long>(steps_), static_cast<double>(batch_sum_) / n, total_ns_ / n / 1000.0,
                execute_ns_ / n / 1000.0, MeanOverheadMicros(), OverheadQuantileMicros(0.5),
                OverheadQuantileMicros(0.9), OverheadQuantileMicros(0.99), MeanCpuOverheadMicros(),
                CpuQuantileMicros(0.5), CpuQuantileMicros(0.9));
  return text;
}

}  // namespace llmserve::engine_core
