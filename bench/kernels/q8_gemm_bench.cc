// The int8 (Q8_0) matmul kernels (kernels/cpu/gemm_q8.h) against each other
// on the Qwen3-0.6B shape: the AVX2 kernel and, where the CPU has AVX-512
// VNNI, the VNNI one, over the same packed bytes.
//   Decode/KERNEL/M: every decoder layer's four matmuls (28 × 15.7 MB of
//     int8 weights, far beyond the caches) for M rows; weight GB/s.
//   Prefill/KERNEL: one layer's four matmuls for 256 rows (weights cached);
//     integer multiply-adds per second.
// KERNEL 0 = AVX2, 1 = VNNI. Run with --benchmark_repetitions and
// --benchmark_enable_random_interleaving on a shared machine and compare
// the two kernels within one run.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/thread_pool.h"

namespace llmserve::kernels::cpu {
namespace {

constexpr size_t kHidden = 1024, kQkv = 4096, kO = 2048, kInter = 3072, kLayers = 28;
constexpr size_t kPrefillRows = 256;

struct Shape {
  size_t rows, cols;
};
constexpr Shape kLayerShapes[] = {{kQkv, kHidden}, {kHidden, kO}, {2 * kInter, kHidden}, {kHidden, kInter}};

ThreadPool& Pool() {
  static ThreadPool pool(2);
  return pool;
}

LinearWeight RandomInt8(Shape s, uint64_t seed) {
  std::vector<int8_t> q(s.rows * s.cols);
  for (auto& v : q) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<int8_t>(static_cast<int>((seed >> 56) % 255) - 127);  // within ±127
  }
  const std::vector<float> scales(s.rows * s.cols / 32, 1e-3f);
  return LinearWeight::PackInt8(q.data(), scales.data(), s.rows, s.cols, s.cols);
}

// The decoder layers' weights packed for `kernel` (0: AVX2, 1: VNNI).
const std::vector<LinearWeight>& Layers(int kernel, size_t layers) {
  static std::vector<LinearWeight> packed[2];
  std::vector<LinearWeight>& w = packed[kernel];
  if (w.size() < 4 * layers) {
    SetMaxIsa(kernel == 0 ? Isa::kAvx2 : Isa::kAmx);
    for (size_t l = w.size() / 4; l < layers; ++l)
      for (const Shape& s : kLayerShapes) w.push_back(RandomInt8(s, w.size() + 1));
    SetMaxIsa(Isa::kAmx);
  }
  return w;
}

bool KernelMissing(benchmark::State& state, int kernel) {
  const bool missing = kernel == 1 ? !GetCpuFeatures().avx512_vnni : !GetCpuFeatures().avx2;
  if (missing) state.SkipWithError(kernel == 1 ? "AVX-512 VNNI: not on this CPU" : "AVX2: not on this CPU");
  return missing;
}

void RunLayers(const std::vector<LinearWeight>& w, size_t layers, size_t m, const std::vector<float>& x,
               std::vector<float>& y) {
  for (size_t i = 0; i < 4 * layers; ++i) w[i].Apply(x.data(), m, y.data(), Pool());
}

void BM_Decode(benchmark::State& state) {
  const int kernel = static_cast<int>(state.range(0));
  const size_t m = static_cast<size_t>(state.range(1));
  if (KernelMissing(state, kernel)) return;
  const auto& w = Layers(kernel, kLayers);
  std::vector<float> x(m * kInter, 0.5f), y(m * 2 * kInter);
  for (auto _ : state) RunLayers(w, kLayers, m, x, y);
  double bytes = 0;
  for (const Shape& s : kLayerShapes) bytes += double(s.rows) * s.cols * kLayers;
  state.counters["weight_GBps"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Decode)->ArgsProduct({{0, 1}, {1, 16}})->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

void BM_Prefill(benchmark::State& state) {
  const int kernel = static_cast<int>(state.range(0));
  if (KernelMissing(state, kernel)) return;
  const auto& w = Layers(kernel, 1);
  std::vector<float> x(kPrefillRows * kInter, 0.5f), y(kPrefillRows * 2 * kInter);
  for (auto _ : state) RunLayers(w, 1, kPrefillRows, x, y);
  double macs = 0;
  for (const Shape& s : kLayerShapes) macs += double(s.rows) * s.cols * kPrefillRows;
  state.counters["GMACps"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Prefill)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace
}  // namespace llmserve::kernels::cpu

BENCHMARK_MAIN();
