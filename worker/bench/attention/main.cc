// Google Benchmark of the paged attention kernel on the Qwen3-0.6B attention
// shape (16 query heads, 8 KV heads, head_dim 128, block 32): a 512-token
// prefill and a 16-request decode at context 512, AVX-512 vs portable path,
// fp32 vs bf16 cache.
// Run: build/bin/llmserve-bench-attention
#include <benchmark/benchmark.h>

#include <numeric>
#include <random>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/paged_attention.h"

namespace {

using namespace llmserve::kernels::cpu;

void Run(benchmark::State& state, bool avx512, bool prefill, bool bf16 = false) {
  PagedAttentionAllowAvx512(avx512);
  PagedAttentionShape s;
  s.kv_dtype = bf16 ? KvDType::kBF16 : KvDType::kF32;
  s.num_q_heads = 16;
  s.num_kv_heads = 8;
  s.head_dim = 128;
  s.block_size = 32;
  s.scale = 0.088f;
  const size_t ctx = 512, requests = prefill ? 1 : 16, tokens = prefill ? ctx : requests;
  const size_t blocks_per_req = ctx / s.block_size, num_blocks = requests * blocks_per_req;
  // Sized for fp32; a bf16 cache uses the first half.
  std::vector<float> kc(num_blocks * s.num_kv_heads * s.block_size * s.head_dim), vc(kc.size());
  std::vector<float> q(tokens * s.num_q_heads * s.head_dim), out(q.size());
  std::mt19937 rng(1);
  std::normal_distribution<float> d;
  for (auto* a : {&kc, &vc, &q}) {
    for (auto& x : *a) x = d(rng);
  }
  if (bf16) {  // rewrite the caches as bf16 values
    for (auto* a : {&kc, &vc}) {
      auto* h = reinterpret_cast<uint16_t*>(a->data());
      for (size_t i = 0; i < a->size(); ++i) h[i] = F32ToBf16(d(rng));
    }
  }
  std::vector<int32_t> table(num_blocks), pos(tokens), req(tokens);
  std::iota(table.begin(), table.end(), 0);
  for (size_t t = 0; t < tokens; ++t) {
    pos[t] = static_cast<int32_t>(prefill ? t : ctx - 1);
    req[t] = static_cast<int32_t>(prefill ? 0 : t);
  }
  PagedAttentionBatch b{tokens, pos.data(), req.data(), table.data(), blocks_per_req};
  ThreadPool pool(0);
  const size_t stride = s.num_q_heads * s.head_dim;
  for (auto _ : state) {
    PagedAttention(q.data(), stride, b, s, kc.data(), vc.data(), out.data(), stride, pool);
    benchmark::DoNotOptimize(out.data());
  }
  // q·k and p·v: 4 flops per (query head, key, dim).
  double keys = 0;
  for (size_t t = 0; t < tokens; ++t) keys += pos[t] + 1;
  state.counters["GFLOP/s"] = benchmark::Counter(4.0 * keys * s.num_q_heads * s.head_dim,
                                                 benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  PagedAttentionAllowAvx512(true);
}

void BM_Prefill512_Avx512(benchmark::State& st) { Run(st, true, true); }
void BM_Prefill512_Portable(benchmark::State& st) { Run(st, false, true); }
void BM_Decode16x512_Avx512(benchmark::State& st) { Run(st, true, false); }
void BM_Decode16x512_Portable(benchmark::State& st) { Run(st, false, false); }
void BM_Decode16x512_Avx512_Bf16Cache(benchmark::State& st) { Run(st, true, false, true); }
BENCHMARK(BM_Prefill512_Avx512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Prefill512_Portable)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Decode16x512_Avx512)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Decode16x512_Portable)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Decode16x512_Avx512_Bf16Cache)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
