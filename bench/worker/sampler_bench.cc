// Benchmarks of the batched sampler on one decode step of 16 requests over
// Qwen3's 151 936-token vocabulary (2 threads), each against the same run's
// baseline: one greedy argmax pass over the same rows, the least any sampler
// must do (read every logit once). Logits are uniform in [-4, 4], like a
// random-weight model's: no token falls under the e^-30 floor, so nothing
// is skipped.
//   build/bin/sampler_bench [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "kernels/cpu/thread_pool.h"
#include "worker/sampler.h"

namespace llmserve::worker {
namespace {

constexpr size_t kVocab = 151936;
constexpr size_t kRows = 16;

kernels::cpu::ThreadPool& Pool() {
  static kernels::cpu::ThreadPool pool(2);
  return pool;
}

const std::vector<float>& Logits() {
  static const std::vector<float> logits = [] {
    std::vector<float> l(kRows * kVocab);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (float& v : l) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      v = static_cast<float>(s % 80001) * 1e-4f - 4.0f;
    }
    return l;
  }();
  return logits;
}

struct Kind {
  const char* name;
  SamplingParams params;
};

const std::vector<Kind>& Kinds() {
  static const std::vector<Kind> kinds = [] {
    std::vector<Kind> k;
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    k.push_back({"greedy (baseline)", greedy});
    k.push_back({"temperature 1", SamplingParams{}});
    SamplingParams qwen;  // Qwen3's recommended sampling
    qwen.temperature = 0.6f;
    qwen.top_k = 20;
    qwen.top_p = 0.95f;
    k.push_back({"t 0.6, top_k 20, top_p 0.95", qwen});
    SamplingParams top_p;
    top_p.top_p = 0.9f;
    k.push_back({"top_p 0.9", top_p});
    SamplingParams min_p;
    min_p.min_p = 0.05f;
    k.push_back({"min_p 0.05", min_p});
    return k;
  }();
  return kinds;
}

std::map<std::string, double>& Fastest() {
  static std::map<std::string, double> fastest;
  return fastest;
}

void BM_SampleStep(benchmark::State& state) {
  const Kind& kind = Kinds()[static_cast<size_t>(state.range(0))];
  const std::vector<float>& logits = Logits();
  std::vector<SamplerRow> rows(kRows);
  for (size_t r = 0; r < kRows; ++r) {
    rows[r].logits = logits.data() + r * kVocab;
    rows[r].params = &kind.params;
    rows[r].seed = 1234 + r;
  }
  const Sampler sampler(1);
  uint64_t position = 0;
  for (auto _ : state) {
    for (SamplerRow& row : rows) row.output_position = position;
    ++position;
    benchmark::DoNotOptimize(sampler.Sample(rows, kVocab, Pool()));
  }
  state.SetLabel(kind.name);
  // Iteration time from the run's own measurement (real time).
  state.counters["step_us"] = benchmark::Counter(static_cast<double>(state.iterations()) * 1e-6,
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SampleStep)->DenseRange(0, 4)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Collects each benchmark's fastest repetition for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      const double us = run.GetAdjustedRealTime();
      auto [it, fresh] = Fastest().try_emplace(run.report_label, us);
      if (!fresh && us < it->second) it->second = us;
    }
  }
};

}  // namespace
}  // namespace llmserve::worker

int main(int argc, char** argv) {
  using llmserve::worker::Fastest;
  benchmark::Initialize(&argc, argv);
  llmserve::worker::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto base = Fastest().find("greedy (baseline)");
  std::printf("\n=== sampler_bench summary: 16 rows x 151936 logits, 2 threads, fastest repetition ===\n");
  std::printf("%-32s %12s %16s\n", "sampling", "step us", "x greedy pass");
  for (const auto& [name, us] : Fastest()) {
    std::printf("%-32s %12.1f %16.2f\n", name.c_str(), us, base != Fastest().end() ? us / base->second : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
