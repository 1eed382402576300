// Benchmarks of the CPU matmul (kernels/cpu/linear.h) on the Qwen3-0.6B shape
// in bf16, each reported against a baseline measured in the same run:
//   (a) one decode step's matmuls at m = 1 vs the read bandwidth of a large buffer;
//   (b) the same step at m = 4, 16, 64 vs m = 1;
//   (c) the prefill matmuls at m = 512 vs the AMX in-register peak and OpenBLAS sgemm;
//   the four layer matmuls of a served prefill step (m = 2048) vs the bf16 peak
//   (AMX, or vdpbf16ps without AMX).
// A summary table is printed after Google Benchmark's own output; it uses the
// fastest repetition of each benchmark (run with --benchmark_repetitions and
// --benchmark_enable_random_interleaving on a shared machine).
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/amx_peak.h"
#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_amx.h"
#include "kernels/cpu/gemm_dpbf16.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/thread_pool.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace llmserve::kernels::cpu {
namespace {

constexpr size_t kHidden = 1024, kQ = 2048, kKv = 1024, kInter = 3072, kVocab = 151936;
constexpr size_t kLayers = 28;
constexpr size_t kPrefill = 512;

ThreadPool& Pool() {
  static ThreadPool pool(2);
  return pool;
}

uint64_t NextRandom(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// Random bf16 weight (values in about ±0.06) packed for kBF16.
LinearWeight RandomBf16Linear(size_t rows, size_t cols, uint64_t seed) {
  std::vector<uint16_t> w(rows * cols);
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& v : w) {
    const float f = (static_cast<int>(NextRandom(s) % 2001) - 1000) * 6e-5f;
    v = F32ToBf16(f);
  }
  return LinearWeight::Pack(w.data(), WeightDType::kBF16, rows, cols, cols, MatmulPrecision::kBF16);
}

struct Layer {
  LinearWeight q, k, v, o, gate, up, down;
};

// The Qwen3-0.6B matmul weights (1.19 GB in bf16), built once.
struct Model {
  std::vector<Layer> layers;
  LinearWeight lm_head;
  size_t layer_bytes = 0;
  std::vector<float> x;  // activations, large enough for any m used here
  std::vector<float> y;

  Model() {
    for (size_t l = 0; l < kLayers; ++l) {
      const uint64_t s = 100 * l;
      layers.push_back({RandomBf16Linear(kQ, kHidden, s + 1), RandomBf16Linear(kKv, kHidden, s + 2),
                        RandomBf16Linear(kKv, kHidden, s + 3), RandomBf16Linear(kHidden, kQ, s + 4),
                        RandomBf16Linear(kInter, kHidden, s + 5),
                        RandomBf16Linear(kInter, kHidden, s + 6),
                        RandomBf16Linear(kHidden, kInter, s + 7)});
      const Layer& L = layers.back();
      for (const LinearWeight* w : {&L.q, &L.k, &L.v, &L.o, &L.gate, &L.up, &L.down})
        layer_bytes += w->bytes();
    }
    lm_head = RandomBf16Linear(kVocab, kHidden, 99999);
    x.resize(kPrefill * kInter);
    uint64_t s = 42;
    for (auto& v : x) v = (static_cast<int>(NextRandom(s) % 2001) - 1000) * 1e-3f;
    y.resize(std::max(kPrefill * kInter, 64 * kVocab));
  }
  size_t bytes() const { return layer_bytes + lm_head.bytes(); }
  // Multiply-adds ×2 of one token through the layers (and the lm_head).
  static double LayerFlopsPerToken() {
    return 2.0 * kLayers * kHidden * (kQ + 2 * kKv + kInter * 3) + 2.0 * kQ * kHidden;
  }
  static double HeadFlopsPerToken() { return 2.0 * kVocab * kHidden; }

  // The matmuls of one step over m tokens; logits for `head_rows` of them.
  void Step(size_t m, size_t head_rows) {
    ThreadPool& pool = Pool();
    for (const Layer& L : layers) {
      L.q.Apply(x.data(), m, y.data(), pool);
      L.k.Apply(x.data(), m, y.data(), pool);
      L.v.Apply(x.data(), m, y.data(), pool);
      L.o.Apply(x.data(), m, y.data(), pool);
      L.gate.Apply(x.data(), m, y.data(), pool);
      L.up.Apply(x.data(), m, y.data(), pool);
      L.down.Apply(x.data(), m, y.data(), pool);
    }
    lm_head.Apply(x.data(), head_rows, y.data(), pool);
  }
};

Model& GetModel() {
  static Model* model = new Model();
  return *model;
}

// ---- (a), (b): decode step ------------------------------------------------------
void BM_DecodeStep(benchmark::State& state) {
  Model& model = GetModel();
  const size_t m = static_cast<size_t>(state.range(0));
  for (auto _ : state) model.Step(m, m);
  state.counters["weight_GBps"] = benchmark::Counter(
      double(model.bytes()) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens_per_s"] =
      benchmark::Counter(double(m), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DecodeStep)->Arg(1)->Arg(4)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// The lm_head alone at m = 1 (311 MB of bf16 weights) with each kernel
// family: 0 = kBF16 on AMX tiles, 1 = kF32 on the AVX-512 FMA kernel (the same
// bf16 weights widened). Shows whether m = 1 on AMX streams as well as FMA.
void BM_LmHeadGemv(benchmark::State& state) {
  static std::map<int, LinearWeight>* heads = new std::map<int, LinearWeight>();
  const int variant = int(state.range(0));
  if (variant == 0 && !GetCpuFeatures().amx) {
    state.SkipWithError("no AMX on this CPU");
    return;
  }
  auto it = heads->find(variant);
  if (it == heads->end()) {
    std::vector<uint16_t> w(kVocab * kHidden);
    uint64_t s = 5;
    for (auto& v : w) v = F32ToBf16((static_cast<int>(NextRandom(s) % 2001) - 1000) * 6e-5f);
    it = heads->emplace(variant, LinearWeight::Pack(w.data(), WeightDType::kBF16, kVocab, kHidden,
                                                    kHidden, variant == 0 ? MatmulPrecision::kBF16
                                                                          : MatmulPrecision::kF32))
             .first;
  }
  Model& model = GetModel();
  for (auto _ : state) it->second.Apply(model.x.data(), 1, model.y.data(), Pool());
  state.counters["weight_GBps"] = benchmark::Counter(
      double(it->second.bytes()) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LmHeadGemv)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// ---- (c): prefill ---------------------------------------------------------------
void BM_PrefillStep(benchmark::State& state) {
  Model& model = GetModel();
  for (auto _ : state) model.Step(kPrefill, 1);  // logits for the last token only
  const double flops = kPrefill * Model::LayerFlopsPerToken() + Model::HeadFlopsPerToken();
  state.counters["GFLOPps"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens_per_s"] =
      benchmark::Counter(double(kPrefill), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PrefillStep)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// ---- baselines ------------------------------------------------------------------
// Sums `streams` equal parts of [p, p + n) in lock step, 256 bytes of each per
// step, so the memory system sees that many sequential streams at once.
__attribute__((target("avx512f"))) uint64_t SumAvx512(const uint64_t* p, size_t n, size_t streams) {
  __m512i acc[8];
  for (auto& a : acc) a = _mm512_setzero_si512();
  const size_t part = n / streams / 32 * 32;
  for (size_t i = 0; i < part; i += 32) {
    for (size_t s = 0; s < streams; ++s) {
      const uint64_t* q = p + s * part + i;
      acc[s % 8] = _mm512_add_epi64(acc[s % 8], _mm512_load_si512(q));
      acc[(s + 1) % 8] = _mm512_add_epi64(acc[(s + 1) % 8], _mm512_load_si512(q + 8));
      acc[(s + 2) % 8] = _mm512_add_epi64(acc[(s + 2) % 8], _mm512_load_si512(q + 16));
      acc[(s + 3) % 8] = _mm512_add_epi64(acc[(s + 3) % 8], _mm512_load_si512(q + 24));
    }
  }
  alignas(64) uint64_t lanes[8];
  __m512i total = acc[0];
  for (int i = 1; i < 8; ++i) total = _mm512_add_epi64(total, acc[i]);
  _mm512_store_si512(lanes, total);
  uint64_t sum = 0;
  for (uint64_t v : lanes) sum += v;
  return sum;
}

uint64_t SumPlain(const uint64_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i];
  return s;
}

// Read bandwidth of a 1 GiB buffer with both threads of the pool; the argument
// is the number of sequential streams each thread reads at once. The summary
// takes the best of them as the machine's read bandwidth.
void BM_ReadBandwidth(benchmark::State& state) {
  constexpr size_t kBytes = size_t{1} << 30;
  static std::vector<uint64_t, AlignedAllocator<uint64_t>>* buffer = [] {
    auto* b = new std::vector<uint64_t, AlignedAllocator<uint64_t>>(kBytes / 8);
    for (size_t i = 0; i < b->size(); ++i) (*b)[i] = i;
    return b;
  }();
  const bool avx512 = GetCpuFeatures().avx512;
  const size_t streams = static_cast<size_t>(state.range(0));
  uint64_t sink[2] = {0, 0};
  for (auto _ : state) {
    Pool().ParallelFor(2, 1, [&](size_t b, size_t, size_t t) {
      const size_t half = buffer->size() / 2;
      const uint64_t* p = buffer->data() + b * half;
      sink[t] += avx512 ? SumAvx512(p, half, streams) : SumPlain(p, half);
    });
  }
  benchmark::DoNotOptimize(sink);
  state.counters["GBps"] =
      benchmark::Counter(double(kBytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReadBandwidth)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();


constexpr size_t kAmxPeakIterations = 1 << 16;
constexpr double kAmxPeakFlops = 2.0 * kAmxPeakIterations * kAmxPeakFlopsPerIteration;  // both threads

void BM_AmxPeak(benchmark::State& state) {
  if (!GetCpuFeatures().amx) {
    state.SkipWithError("no AMX on this CPU");
    return;
  }
  for (auto _ : state) {
    Pool().ParallelFor(2, 1, [&](size_t, size_t, size_t) { AmxPeakLoop(kAmxPeakIterations); });
  }
  state.counters["GFLOPps"] =
      benchmark::Counter(kAmxPeakFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AmxPeak)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

constexpr size_t kDpbf16PeakIterations = 1 << 16;
constexpr double kDpbf16PeakFlops = 2.0 * kDpbf16PeakIterations * dpbf16::kDpbf16PeakFlopsPerIteration;

void BM_Dpbf16Peak(benchmark::State& state) {
  if (!GetCpuFeatures().avx512_bf16) {
    state.SkipWithError("no AVX512-BF16 on this CPU");
    return;
  }
  for (auto _ : state) {
    Pool().ParallelFor(2, 1, [&](size_t, size_t, size_t) {
      benchmark::DoNotOptimize(dpbf16::Dpbf16PeakLoop(kDpbf16PeakIterations));
    });
  }
  state.counters["GFLOPps"] =
      benchmark::Counter(kDpbf16PeakFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Dpbf16Peak)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// The four layer matmuls of a served prefill step (16 prompts of 128 tokens:
// m = 2048) in kBF16. Arg: 0 qkv, 1 o, 2 gate_up, 3 down.
constexpr size_t kServedPrefillM = 2048;
struct LayerShape {
  const char* name;
  size_t rows, cols;
};
constexpr LayerShape kLayerShapes[] = {
    {"qkv", kQ + 2 * kKv, kHidden}, {"o", kHidden, kQ}, {"gate_up", 2 * kInter, kHidden}, {"down", kHidden, kInter}};

void BM_ServedPrefillGemm(benchmark::State& state) {
  const LayerShape& shape = kLayerShapes[state.range(0)];
  const LinearWeight w = RandomBf16Linear(shape.rows, shape.cols, 40 + state.range(0));
  std::vector<float> x(kServedPrefillM * shape.cols), y(kServedPrefillM * shape.rows);
  uint64_t s = 9;
  for (auto& v : x) v = (static_cast<int>(NextRandom(s) % 2001) - 1000) * 1e-3f;
  for (auto _ : state) w.Apply(x.data(), kServedPrefillM, y.data(), Pool());
  state.counters["GFLOPps"] = benchmark::Counter(2.0 * kServedPrefillM * shape.rows * shape.cols * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ServedPrefillGemm)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// One prefill-shaped GEMM (512 × 1024 → 3072, the gate projection): OpenBLAS
// sgemm on fp32 weights vs LinearWeight in both precisions.
constexpr int kGemmM = 512, kGemmK = 1024, kGemmN = 3072;
constexpr double kGemmFlops = 2.0 * kGemmM * kGemmK * kGemmN;

struct GemmData {
  std::vector<float> x, w, y;
  GemmData() : x(size_t{kGemmM} * kGemmK), w(size_t{kGemmN} * kGemmK), y(size_t{kGemmM} * kGemmN) {
    uint64_t s = 7;
    for (auto& v : x) v = (static_cast<int>(NextRandom(s) % 2001) - 1000) * 1e-3f;
    for (auto& v : w) v = Bf16ToF32(F32ToBf16((static_cast<int>(NextRandom(s) % 2001) - 1000) * 6e-5f));
  }
};
GemmData& Gemm() {
  static GemmData* data = new GemmData();
  return *data;
}

void BM_OpenBlasSgemm(benchmark::State& state) {
  GemmData& d = Gemm();
  openblas_set_num_threads(2);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kGemmM, kGemmN, kGemmK, 1.f, d.x.data(),
                kGemmK, d.w.data(), kGemmK, 0.f, d.y.data(), kGemmN);
  }
  state.counters["GFLOPps"] =
      benchmark::Counter(kGemmFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_OpenBlasSgemm)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// Arg 0: kF32, 1: kBF16.
void BM_LinearGemm(benchmark::State& state) {
  GemmData& d = Gemm();
  const auto precision = state.range(0) == 0 ? MatmulPrecision::kF32 : MatmulPrecision::kBF16;
  static std::map<int, LinearWeight>* packed = new std::map<int, LinearWeight>();
  auto it = packed->find(int(state.range(0)));
  if (it == packed->end()) {
    it = packed->emplace(int(state.range(0)),
                         LinearWeight::Pack(d.w.data(), WeightDType::kF32, kGemmN, kGemmK, kGemmK,
                                            precision)).first;
  }
  for (auto _ : state) it->second.Apply(d.x.data(), kGemmM, d.y.data(), Pool());
  state.counters["GFLOPps"] =
      benchmark::Counter(kGemmFlops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_LinearGemm)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// Weight packing at load (one thread): amx::Pack (AVX-512 transposes) vs its
// scalar reference vs a plain copy of the same bytes (the memory-bound floor),
// on the gate projection (3072 × 1024 bf16). Arg 0: Pack, 1: PackReference,
// 2: memcpy.
void BM_AmxPack(benchmark::State& state) {
  if (!GetCpuFeatures().avx512) {
    state.SkipWithError("amx::Pack needs AVX-512");
    return;
  }
  static const std::vector<uint16_t>* src = [] {
    auto* w = new std::vector<uint16_t>(size_t{kGemmN} * kGemmK);
    uint64_t s = 11;
    for (auto& v : *w) v = F32ToBf16((static_cast<int>(NextRandom(s) % 2001) - 1000) * 6e-5f);
    return w;
  }();
  std::vector<uint16_t, AlignedAllocator<uint16_t>> dst(amx::PackedBytes(kGemmN, kGemmK) / 2);
  for (auto _ : state) {
    switch (state.range(0)) {
      case 0: amx::Pack(src->data(), WeightDType::kBF16, kGemmN, kGemmK, kGemmK, dst.data()); break;
      case 1: amx::PackReference(src->data(), WeightDType::kBF16, kGemmN, kGemmK, kGemmK, dst.data()); break;
      default: std::memcpy(dst.data(), src->data(), src->size() * 2); break;
    }
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(src->size() * 2));
}
BENCHMARK(BM_AmxPack)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

// Cost of handing an empty loop to both threads.
void BM_ParallelForOverhead(benchmark::State& state) {
  size_t sink[2] = {0, 0};
  for (auto _ : state) {
    Pool().ParallelFor(2, 1, [&](size_t b, size_t, size_t t) { sink[t] += b; });
  }
  benchmark::DoNotOptimize(sink);
}
BENCHMARK(BM_ParallelForOverhead)->Unit(benchmark::kMicrosecond)->UseRealTime()->MeasureProcessCPUTime();

// ---- summary ----------------------------------------------------------------------
// Keeps the fastest repetition (seconds per iteration) and its counters.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Best {
    double seconds = 0;      // wall time per iteration
    double cpu_seconds = 0;  // process CPU time per iteration / threads
    std::map<std::string, double> counters;
  };
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred || run.iterations == 0) continue;
      const std::string name = run.run_name.function_name +
                               (run.run_name.args.empty() ? "" : "/" + run.run_name.args);
      const double seconds = run.real_accumulated_time / double(run.iterations);
      const double cpu_seconds = run.cpu_accumulated_time / double(run.iterations) / 2.0;
      Best& best = best_[name];
      if (best.seconds == 0 || seconds < best.seconds) {
        best.seconds = seconds;
        best.counters.clear();
        for (const auto& [key, counter] : run.counters) best.counters[key] = counter.value;
      }
      if (best.cpu_seconds == 0 || cpu_seconds < best.cpu_seconds) best.cpu_seconds = cpu_seconds;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const Best* Find(const std::string& name) const {
    auto it = best_.find(name);
    return it == best_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Best> best_;
};

// Prints the table from wall time (cpu = false) or from process CPU time per
// thread (cpu = true: what each figure would be if no other process had taken
// the cores; on a shared machine that is the steadier comparison).
void PrintTable(const SummaryReporter& r, bool cpu) {
  auto secs = [cpu](const SummaryReporter::Best* b) { return cpu ? b->cpu_seconds : b->seconds; };
  const double model_gb = double(GetModel().bytes()) * 1e-9;
  std::printf("--- from %s ---\n", cpu ? "process CPU time / 2 threads" : "wall-clock time");
  const SummaryReporter::Best* bw = nullptr;
  int bw_streams = 0;
  for (int streams : {1, 2, 4, 8}) {
    const auto* b = r.Find("BM_ReadBandwidth/" + std::to_string(streams));
    if (b && (!bw || secs(b) < secs(bw))) {
      bw = b;
      bw_streams = streams;
    }
  }
  const double bw_gbps = bw ? 1.073741824 / secs(bw) : 0;
  if (bw)
    std::printf("read bandwidth, 1 GiB buffer (best of 1/2/4/8 streams per thread: %d): %.2f GB/s\n",
                bw_streams, bw_gbps);
  const auto* d1 = r.Find("BM_DecodeStep/1");
  if (d1) {
    const double gbps = model_gb / secs(d1);
    std::printf("(a) decode m=1: %.2f ms/step, %.3f GB of weights -> %.2f GB/s = %.3f of read bandwidth"
                " (%.1f tok/s)\n",
                secs(d1) * 1e3, model_gb, gbps, bw_gbps > 0 ? gbps / bw_gbps : 0, 1 / secs(d1));
  }
  for (int m : {4, 16, 64}) {
    const auto* d = r.Find("BM_DecodeStep/" + std::to_string(m));
    if (d && d1)
      std::printf("(b) decode m=%-2d: %.2f ms/step = %.3fx m=1\n", m, secs(d) * 1e3, secs(d) / secs(d1));
  }
  const auto* p = r.Find("BM_PrefillStep");
  const auto* peak = r.Find("BM_AmxPeak");
  const auto* blas = r.Find("BM_OpenBlasSgemm");
  if (p) {
    const double flops = kPrefill * Model::LayerFlopsPerToken() + Model::HeadFlopsPerToken();
    const double gflops = flops * 1e-9 / secs(p);
    std::printf("(c) prefill m=%zu: %.1f ms, %.0f GFLOP/s -> %.0f tok/s (implied at 1.19 GFLOP/token:"
                " %.0f tok/s)\n",
                kPrefill, secs(p) * 1e3, gflops, kPrefill / secs(p), gflops / 1.19);
    if (peak) {
      const double peak_gflops = kAmxPeakFlops * 1e-9 / secs(peak);
      std::printf("    AMX tdpbf16ps in-register peak (2 threads) %.0f GFLOP/s; prefill = %.3f of it\n",
                  peak_gflops, gflops / peak_gflops);
    }
    if (blas) {
      const double blas_gflops = kGemmFlops * 1e-9 / secs(blas);
      std::printf("    OpenBLAS sgemm 512x1024x3072 (2 threads) %.0f GFLOP/s; prefill = %.2fx it\n",
                  blas_gflops, gflops / blas_gflops);
    }
  }
  const auto* g0 = r.Find("BM_LinearGemm/0");
  const auto* g1 = r.Find("BM_LinearGemm/1");
  if (g0 && g1)
    std::printf("GEMM 512x1024x3072: LinearWeight kBF16 %.0f GFLOP/s, kF32 %.0f GFLOP/s\n",
                kGemmFlops * 1e-9 / secs(g1), kGemmFlops * 1e-9 / secs(g0));
  const auto* dp = r.Find("BM_Dpbf16Peak");
  const auto* amx_peak = r.Find("BM_AmxPeak");
  const double bf16_peak = amx_peak ? kAmxPeakFlops * 1e-9 / secs(amx_peak)
                           : dp     ? kDpbf16PeakFlops * 1e-9 / secs(dp)
                                    : 0;
  for (int i = 0; i < 4; ++i) {
    const auto* g = r.Find("BM_ServedPrefillGemm/" + std::to_string(i));
    if (!g) continue;
    const LayerShape& shape = kLayerShapes[i];
    const double gflops = 2.0 * kServedPrefillM * shape.rows * shape.cols * 1e-9 / secs(g);
    std::printf("served-prefill GEMM %-7s m=%zu %zux%zu: %.0f GFLOP/s", shape.name, kServedPrefillM, shape.cols,
                shape.rows, gflops);
    if (bf16_peak > 0) std::printf(" = %.3f of the %s peak (%.0f)", gflops / bf16_peak, amx_peak ? "AMX" : "vdpbf16ps", bf16_peak);
    std::printf("\n");
  }
  const auto* h0 = r.Find("BM_LmHeadGemv/0");
  const auto* h1 = r.Find("BM_LmHeadGemv/1");
  if (h0 && h1) {
    const double head_gb = 2.0 * kVocab * kHidden * 1e-9;
    std::printf("lm_head alone, m=1: AMX kBF16 %.2f GB/s, AVX-512 FMA kF32 %.2f GB/s (AMX/FMA %.3f)",
                head_gb / secs(h0), head_gb / secs(h1), secs(h1) / secs(h0));
    if (bw) std::printf("; of read bw %.3f, %.3f", head_gb / secs(h0) / bw_gbps, head_gb / secs(h1) / bw_gbps);
    std::printf("\n");
  }
  const auto* pf = r.Find("BM_ParallelForOverhead");
  if (pf && !cpu) std::printf("ParallelFor hand-off (2 threads, empty body): %.2f us\n", pf->seconds * 1e6);
}

void PrintSummary(const SummaryReporter& r) {
  std::printf("\n=== kernels_bench summary (fastest repetition of each; isa=%s, 2 threads) ===\n",
              std::string(IsaName(ActiveIsa())).c_str());
  PrintTable(r, false);
  PrintTable(r, true);
}

}  // namespace
}  // namespace llmserve::kernels::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  llmserve::kernels::cpu::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  llmserve::kernels::cpu::PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
