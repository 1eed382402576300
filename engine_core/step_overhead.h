#pragma once
// StepOverhead: what one engine step costs beyond model execution, measured
// on the serving path (EngineCoreProc's main loop): from the start of
// scheduling to the step's outputs handed to the output thread, minus the
// executor's ExecuteModel time. Aggregated with two clock reads per step and a
// fixed histogram (no allocation after construction); summarized in one log
// line when the engine stops. The stepping thread's CPU time outside the
// executor is kept too: on a shared machine it is the figure to trust.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace llmserve::engine_core {

// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID).
std::chrono::nanoseconds ThreadCpuTime();

class StepOverhead {
 public:
  // Records one step: `total` from schedule start to outputs handed off,
  // `execute` the part spent in the executor; `batch` requests in the step.
  void Add(std::chrono::nanoseconds total, std::chrono::nanoseconds execute, size_t batch);
  // The same step's CPU time of the stepping thread, outside the executor
  // (unlike wall time, not inflated when other processes take the CPU).
  void AddCpu(std::chrono::nanoseconds overhead_cpu);
  // Mean CPU overhead per step (AddCpu), in microseconds.
  double MeanCpuOverheadMicros() const;
  // The q-quantile (0..1) of the CPU overhead (AddCpu), in microseconds: the
  // median is a steady decode step; the mean also carries the rare steps that
  // admit or finish a whole batch.
  double CpuQuantileMicros(double q) const;

  // Steps recorded so far.
  uint64_t steps() const { return steps_; }
  // Mean overhead (total - execute) per step, in microseconds.
  double MeanOverheadMicros() const;
  // The q-quantile (0..1) of the overhead, in microseconds (1 µs buckets; the
  // last bucket holds everything at or above kBuckets - 1 µs).
  double OverheadQuantileMicros(double q) const;
  // "N steps (mean batch B): per step X µs total, Y µs model execution, overhead
  // beyond compute mean Z µs (p50 ..., p99 ...)".
  std::string Summary() const;

 private:
  static constexpr size_t kBuckets = 20000;  // up to 20 ms in 1 µs buckets
  using Histogram = std::array<uint32_t, kBuckets>;
  static void Count(Histogram& h, int64_t micros);
  double Quantile(const Histogram& h, double q) const;
  uint64_t steps_ = 0;
  uint64_t batch_sum_ = 0;
  double total_ns_ = 0;
  double execute_ns_ = 0;
  double overhead_cpu_ns_ = 0;
  uint64_t cpu_steps_ = 0;
  Histogram histogram_{};      // wall overhead, 1 µs buckets
  Histogram cpu_histogram_{};  // CPU overhead, 1 µs buckets
};

}  // namespace llmserve::engine_core
