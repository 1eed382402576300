// Google Benchmark of the paged attention kernel on the Qwen3-0.6B attention
// shape (16 query heads, 8 KV heads, head_dim 128, block 32): a 512-token
// prefill and a 16-request decode at context 512 (and, with vdpbf16ps, at a
// served step's context of 160 read from memory), AVX-512 vs portable path,
// fp32 vs bf16 cache, and bf16 products (what bf16 models run) on AMX tiles
// and with vdpbf16ps (AVX512-BF16, the ISA capped below AMX for it).
// Each case reports GFLOP/s (wall time) and its ratio to the AVX-512 fp32 FMA
// peak of the same thread pool, measured once in the same process; the AMX
// cases also their ratio to the AMX bf16 in-register peak, measured likewise.
// Run: build/bin/llmserve-bench-attention
#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/amx_peak.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/kv_fp8.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/paged_attention.h"

namespace {

using namespace llmserve::kernels::cpu;

// Independent FMA chains on 16 zmm registers: the fp32 FMA ceiling of a core.
__attribute__((target("avx512f"))) float FmaLoop(size_t iterations) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(1e-3f);
  for (size_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < 16; ++i) sum = _mm512_add_ps(sum, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  return std::accumulate(lanes, lanes + 16, 0.0f);
}

// Best-of-5 FMA peak (GFLOP/s, wall) of `pool`, measured on first use.
double FmaPeakGflops(ThreadPool& pool) {
  static const double peak = [&pool] {
    if (!__builtin_cpu_supports("avx512f")) return 0.0;
    constexpr size_t kIterations = 1 << 20;
    double best = 0;
    std::vector<float> sink(pool.size());
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      pool.ParallelFor(pool.size(), 1, [&](size_t, size_t, size_t t) { sink[t] = FmaLoop(kIterations); });
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, 2.0 * 16 * 16 * kIterations * static_cast<double>(pool.size()) / s / 1e9);
    }
    benchmark::DoNotOptimize(sink.data());
    return best;
  }();
  return peak;
}

// Best-of-5 AMX tdpbf16ps peak (GFLOP/s, wall) of `pool`, measured on first
// use; 0 without AMX.
double AmxPeakGflops(ThreadPool& pool) {
  static const double peak = [&pool] {
    if (ActiveIsa() != Isa::kAmx) return 0.0;
    constexpr size_t kIterations = 1 << 16;
    double best = 0;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      pool.ParallelFor(pool.size(), 1, [&](size_t, size_t, size_t) { AmxPeakLoop(kIterations); });
      const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, kAmxPeakFlopsPerIteration * kIterations * static_cast<double>(pool.size()) / sec / 1e9);
    }
    return best;
  }();
  return peak;
}

// Which products the attention kernel multiplies in.
enum class Products { kFp32, kAmx, kDpbf16 };

// `ctx`: the context of every request; `copies`: caches cycled between
// iterations, so that a short-context decode reads from memory as a served
// step's 28 layers do, not from the last iteration's L3.
void Run(benchmark::State& state, bool avx512, bool prefill, KvDType kv = KvDType::kF32,
         Products products = Products::kFp32, size_t ctx = 512, size_t copies = 1) {
  const bool amx = products == Products::kAmx;
  if (amx && ActiveIsa() != Isa::kAmx) {
    state.SkipWithError("no AMX on this CPU");
    return;
  }
  if (products == Products::kDpbf16 && !GetCpuFeatures().avx512_bf16) {
    state.SkipWithError("no AVX512-BF16 on this CPU");
    return;
  }
  // vdpbf16ps runs where AMX does not: cap the ISA below AMX for it.
  if (products == Products::kDpbf16) SetMaxIsa(Isa::kAvx512Bf16);
  PagedAttentionAllowAvx512(avx512);
  PagedAttentionShape s;
  s.bf16_products = products != Products::kFp32;
  s.kv_dtype = kv;
  s.num_q_heads = 16;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.block_size = 32;
  s.scale = 0.088f;
  const size_t requests = prefill ? 1 : 16, tokens = prefill ? ctx : requests;
  const size_t blocks_per_req = (ctx + s.block_size - 1) / s.block_size, num_blocks = copies * requests * blocks_per_req;
  // Sized for fp32; a bf16 or fp8 cache uses the first half or quarter.
  std::vector<float> kc(num_blocks * s.num_kv_heads * s.block_size * s.head_dim), vc(kc.size());
  std::vector<float> q(tokens * s.num_q_heads * s.head_dim), out(q.size());
  std::mt19937 rng(1);
  std::normal_distribution<float> d;
  for (auto* a : {&kc, &vc, &q}) {
    for (auto& x : *a) x = d(rng);
  }
  if (kv == KvDType::kBF16) {  // rewrite the caches as bf16 values
    for (auto* a : {&kc, &vc}) {
      auto* h = reinterpret_cast<uint16_t*>(a->data());
      for (size_t i = 0; i < a->size(); ++i) h[i] = F32ToBf16(d(rng));
    }
  } else if (IsFp8(kv)) {  // or fp8 codes
    for (auto* a : {&kc, &vc}) {
      auto* b = reinterpret_cast<uint8_t*>(a->data());
      for (size_t i = 0; i < a->size(); ++i) b[i] = EncodeFp8E4M3(d(rng));
    }
  }
  std::vector<int32_t> table(num_blocks), pos(tokens), req(tokens);
  std::iota(table.begin(), table.end(), 0);  // copy c's tables: entries c * requests * blocks_per_req ...
  for (size_t t = 0; t < tokens; ++t) {
    pos[t] = static_cast<int32_t>(prefill ? t : ctx - 1);
    req[t] = static_cast<int32_t>(prefill ? 0 : t);
  }
  static ThreadPool pool(0);
  const size_t stride = s.num_q_heads * s.head_dim;
  size_t copy = 0;
  for (auto _ : state) {
    PagedAttentionBatch b{tokens, pos.data(), req.data(), table.data() + copy * requests * blocks_per_req,
                          blocks_per_req};
    PagedAttention(q.data(), stride, b, s, kc.data(), vc.data(), out.data(), stride, pool);
    benchmark::DoNotOptimize(out.data());
    copy = (copy + 1) % copies;
  }
  // q·k and p·v: 4 flops per (query head, key, dim).
  double keys = 0;
  for (size_t t = 0; t < tokens; ++t) keys += pos[t] + 1;
  const double flops = 4.0 * keys * s.num_q_heads * s.head_dim;
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  const double peak = FmaPeakGflops(pool);
  state.counters["fma_peak_GFLOP/s"] = peak;
  // Wall seconds per iteration are known only after the run; derive the ratio from them.
  state.counters["of_fma_peak"] = benchmark::Counter(peak > 0 ? flops / 1e9 / peak : 0,
                                                     benchmark::Counter::kIsIterationInvariantRate);
  if (amx) {
    const double amx_peak = AmxPeakGflops(pool);
    state.counters["amx_peak_GFLOP/s"] = amx_peak;
    state.counters["of_amx_peak"] = benchmark::Counter(amx_peak > 0 ? flops / 1e9 / amx_peak : 0,
                                                       benchmark::Counter::kIsIterationInvariantRate);
  }
  PagedAttentionAllowAvx512(true);
  SetMaxIsa(Isa::kAmx);
}

void BM_Prefill512_Avx512(benchmark::State& st) { Run(st, true, true); }
void BM_Prefill512_Portable(benchmark::State& st) { Run(st, false, true); }
void BM_Decode16x512_Avx512(benchmark::State& st) { Run(st, true, false); }
void BM_Decode16x512_Portable(benchmark::State& st) { Run(st, false, false); }
void BM_Decode16x512_Avx512_Bf16Cache(benchmark::State& st) { Run(st, true, false, KvDType::kBF16); }
void BM_Prefill512_Avx512_Bf16Cache(benchmark::State& st) { Run(st, true, true, KvDType::kBF16); }
void BM_Prefill512_Amx(benchmark::State& st) { Run(st, true, true, KvDType::kF32, Products::kAmx); }
void BM_Prefill512_Amx_Bf16Cache(benchmark::State& st) { Run(st, true, true, KvDType::kBF16, Products::kAmx); }
void BM_Decode16x512_Amx(benchmark::State& st) { Run(st, true, false, KvDType::kF32, Products::kAmx); }
void BM_Decode16x512_Amx_Bf16Cache(benchmark::State& st) { Run(st, true, false, KvDType::kBF16, Products::kAmx); }
void BM_Prefill512_Dpbf16_Bf16Cache(benchmark::State& st) { Run(st, true, true, KvDType::kBF16, Products::kDpbf16); }
void BM_Decode16x512_Dpbf16_Bf16Cache(benchmark::State& st) { Run(st, true, false, KvDType::kBF16, Products::kDpbf16); }
// A served decode step's context (128-token prompts, 64 outputs), 8 caches of
// ~5 MiB cycled.
void BM_Decode16x160_Dpbf16_Bf16Cache(benchmark::State& st) {
  Run(st, true, false, KvDType::kBF16, Products::kDpbf16, 160, 8);
}
// A long context from memory (a bf16 cache of 16 requests × 2,048 tokens is
// 134 MB): what an fp8 cache's half-size reads buy against bf16 (bf16 models
// run the vdpbf16ps kernel on a bf16 cache; an fp8 cache runs the fp32 one).
void BM_Decode16x2048_Avx512_Bf16Cache(benchmark::State& st) {
  Run(st, true, false, KvDType::kBF16, Products::kFp32, 2048);
}
void BM_Decode16x2048_Dpbf16_Bf16Cache(benchmark::State& st) {
  Run(st, true, false, KvDType::kBF16, Products::kDpbf16, 2048);
}
void BM_Decode16x2048_Avx512_Fp8Cache(benchmark::State& st) {
  Run(st, true, false, KvDType::kFp8E4M3, Products::kFp32, 2048);
}
void BM_Decode16x512_Avx512_Fp8Cache(benchmark::State& st) { Run(st, true, false, KvDType::kFp8E4M3); }
void BM_Prefill512_Avx512_Fp8Cache(benchmark::State& st) { Run(st, true, true, KvDType::kFp8E4M3); }
BENCHMARK(BM_Decode16x2048_Avx512_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x2048_Dpbf16_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x2048_Avx512_Fp8Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Avx512_Fp8Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Avx512_Fp8Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Amx)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Amx_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Amx)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Amx_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Dpbf16_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Dpbf16_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x160_Dpbf16_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Avx512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Portable)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Avx512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Portable)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode16x512_Avx512_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill512_Avx512_Bf16Cache)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
