// llmserve-bench-worker: end-to-end forward-pass throughput of the CPU model
// runner on the Qwen3-0.6B shape (or any model directory), with the
// machine's read-bandwidth roofline measured in the same run.
//
// Reports, as JSON lines on stdout:
//   {"what":"read_bandwidth", "gb_per_s":...}
//   {"what":"decode", "batch":B, "step_ms":..., "tok_per_s":..., "step_vs_batch1":...,
//    "roofline_tok_per_s":..., "ratio_to_roofline":...}        (roofline only at batch 1)
//   {"what":"sgemm_peak", "gflop_per_s":...}                  (OpenBLAS fp32, same run)
//   {"what":"prefill", "tokens":N, "tok_per_s":..., "weight_gflop_per_s":..., "ratio_to_sgemm_peak":...}
// (weight GFLOP = 2 × (layer matmul parameters × tokens + lm_head parameters): the
// lm_head runs for the last token only.)
#include <cblas.h>
#include <immintrin.h>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "common/flags.h"
#include "kernels/cpu/paged_attention.h"
#include "worker/forward_batch.h"
#include "worker/kv_cache.h"
#include "worker/model.h"
#include "worker/test_model.h"

DEFINE_string(bench_model, "", "Model directory; empty: generate the qwen3-0.6b preset into --bench-cache-dir.");
DEFINE_string(bench_cache_dir, "build/bench_models", "Where the generated qwen3-0.6b model is kept between runs.");
DEFINE_string(bench_precision, "f32", "Matmul precision: f32 or bf16.");
DEFINE_int32(bench_threads, 0, "Threads (0: all hardware threads).");
DEFINE_string(bench_batches, "1,4,16,64", "Decode batch sizes.");
DEFINE_int32(bench_decode_steps, 4, "Timed decode steps per batch size (best step is reported).");
DEFINE_int32(bench_prefill_tokens, 512, "Prompt length of the prefill measurement (0: skip).");
DEFINE_int32(bench_context, 16, "Prompt tokens each decode request holds before the timed steps.");
DEFINE_string(bench_kv_dtype, "f32", "KV cache element type: f32 or bf16.");
DEFINE_bool(bench_attention_avx512, true, "Let attention use its AVX-512 path (false: the portable one).");
DEFINE_int32(bench_bandwidth_mib, 1024, "Size of the buffer read for the bandwidth roofline.");

namespace {

using Clock = std::chrono::steady_clock;
using llmserve::worker::ForwardBatch;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// XOR of buf[begin, end) with 64-byte loads (AVX-512) — a pure streaming read.
__attribute__((target("avx512f"))) uint64_t XorAvx512(const uint64_t* buf, size_t begin, size_t end) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = begin;
  for (; i + 32 <= end; i += 32) {
    a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(buf + i));
    a1 = _mm512_xor_si512(a1, _mm512_loadu_si512(buf + i + 8));
    a2 = _mm512_xor_si512(a2, _mm512_loadu_si512(buf + i + 16));
    a3 = _mm512_xor_si512(a3, _mm512_loadu_si512(buf + i + 24));
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3)));
  uint64_t r = 0;
  for (uint64_t l : lanes) r ^= l;
  for (; i < end; ++i) r ^= buf[i];
  return r;
}

uint64_t XorPortable(const uint64_t* buf, size_t begin, size_t end) {
  uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    for (size_t l = 0; l < 8; ++l) acc[l] ^= buf[i + l];
  }
  uint64_t r = acc[0] ^ acc[1] ^ acc[2] ^ acc[3] ^ acc[4] ^ acc[5] ^ acc[6] ^ acc[7];
  for (; i < end; ++i) r ^= buf[i];
  return r;
}

// Best-of-`reps` read bandwidth (GB/s) of a large buffer, read by every pool thread.
double ReadBandwidth(llmserve::kernels::cpu::ThreadPool& pool, const std::vector<uint64_t>& buf, int reps) {
  const size_t n = buf.size();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::vector<uint64_t> sink(pool.size());
  double best = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = Clock::now();
    pool.ParallelFor(n, 1 << 16, [&](size_t begin, size_t end, size_t thread) {
      sink[thread] = avx512 ? XorAvx512(buf.data(), begin, end) : XorPortable(buf.data(), begin, end);
    });
    best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / Seconds(t0, Clock::now()) / 1e9);
  }
  if (std::accumulate(sink.begin(), sink.end(), uint64_t{0}) == 42) std::fputs("", stderr);
  return best;
}

// Best-of-3 fp32 GEMM rate of OpenBLAS (n × n × n), GFLOP/s: the machine's
// fp32 GEMM peak as a well-tuned library reaches it.
double SgemmPeak(size_t n) {
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n),
                1.0f, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n), 0.0f, c.data(), static_cast<int>(n));
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) / Seconds(t0, Clock::now()) / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-bench-worker: decode and prefill throughput of the CPU model runner.\n"
      "usage: llmserve-bench-worker [--bench-model DIR] [--bench-precision f32|bf16] [--bench-batches 1,4,16,64]");
  namespace w = llmserve::worker;
  std::string dir = FLAGS_bench_model;
  if (dir.empty()) {
    dir = FLAGS_bench_cache_dir + "/qwen3-0.6b-random";
    if (!std::filesystem::exists(dir + "/config.json")) {
      auto spec = w::TestModelPreset("qwen3-0.6b", "qwen3");
      CHECK(spec.ok());
      std::fprintf(stderr, "generating %s ...\n", dir.c_str());
      const auto st = w::WriteTestModel(*spec, dir);
      if (!st.ok()) {
        LOG(ERROR) << st.ToString();
        return 1;
      }
    }
  }
  llmserve::kernels::cpu::PagedAttentionAllowAvx512(FLAGS_bench_attention_avx512);
  llmserve::kernels::cpu::ThreadPool pool(static_cast<size_t>(std::max(0, FLAGS_bench_threads)));
  w::LoadOptions opts;
  opts.precision = FLAGS_bench_precision == "bf16" ? llmserve::kernels::cpu::MatmulPrecision::kBF16
                                                   : llmserve::kernels::cpu::MatmulPrecision::kF32;
  auto model_or = w::Model::Load(dir, opts, nullptr, &pool);
  if (!model_or.ok()) {
    LOG(ERROR) << model_or.status().ToString();
    return 1;
  }
  w::Model& model = **model_or;
  const auto& cfg = model.config();
  const size_t bytes_per_step = model.weights().matmul_bytes();
  std::vector<uint64_t> bw_buf(static_cast<size_t>(FLAGS_bench_bandwidth_mib) * (1u << 20) / sizeof(uint64_t));
  for (size_t i = 0; i < bw_buf.size(); ++i) bw_buf[i] = i * 0x9e3779b97f4a7c15ull;
  const double bw = ReadBandwidth(pool, bw_buf, 10);
  std::printf("{\"what\":\"read_bandwidth\",\"gb_per_s\":%.2f,\"threads\":%zu}\n", bw, pool.size());
  std::printf("{\"what\":\"model\",\"dir\":\"%s\",\"weight_bytes_per_step\":%zu,\"precision\":\"%s\"}\n", dir.c_str(),
              bytes_per_step, FLAGS_bench_precision.c_str());
  std::fflush(stdout);

  std::vector<size_t> batches;
  std::stringstream ss(FLAGS_bench_batches);
  for (std::string item; std::getline(ss, item, ',');) batches.push_back(std::stoul(item));
  const size_t bs = w::kDefaultCpuBlockSize, ctx = static_cast<size_t>(FLAGS_bench_context);
  const size_t steps = static_cast<size_t>(std::max(1, FLAGS_bench_decode_steps));
  const size_t blocks_per_req = (ctx + steps + bs - 1) / bs;
  const size_t max_batch = batches.empty() ? 1 : *std::max_element(batches.begin(), batches.end());
  const size_t prefill = static_cast<size_t>(std::max(0, FLAGS_bench_prefill_tokens));
  const size_t num_blocks = std::max(max_batch * blocks_per_req, (prefill + bs - 1) / bs);
  w::KvCache cache(model.CacheShape(num_blocks, bs,
                                    FLAGS_bench_kv_dtype == "bf16" ? llmserve::kernels::cpu::KvDType::kBF16
                                                                   : llmserve::kernels::cpu::KvDType::kF32));
  std::vector<float> logits;
  double step1 = 0;
  for (size_t batch : batches) {
    auto blocks_of = [&](size_t r) {
      std::vector<int32_t> b(blocks_per_req);
      std::iota(b.begin(), b.end(), static_cast<int32_t>(r * blocks_per_req));
      return b;
    };
    ForwardBatch pre;  // fill each request's context (untimed)
    for (size_t r = 0; r < batch; ++r) {
      std::vector<int32_t> toks(ctx);
      for (size_t i = 0; i < ctx; ++i) toks[i] = static_cast<int32_t>((r * 977 + i * 31) % cfg.vocab_size);
      pre.AddRequest(toks, 0, blocks_of(r), bs, true);
    }
    pre.FinishBlockTables();
    CHECK(model.Forward(pre, cache, &logits).ok());
    double best = 1e30;
    for (size_t s = 0; s < steps; ++s) {
      ForwardBatch b;
      for (size_t r = 0; r < batch; ++r) {
        const float* row = &logits[(logits.size() / cfg.vocab_size == batch ? r : 0) * cfg.vocab_size];
        const int32_t next = static_cast<int32_t>(std::max_element(row, row + cfg.vocab_size) - row);
        b.AddRequest({next}, static_cast<int32_t>(ctx + s), blocks_of(r), bs, true);
      }
      b.FinishBlockTables();
      const auto t0 = Clock::now();
      CHECK(model.Forward(b, cache, &logits).ok());
      best = std::min(best, Seconds(t0, Clock::now()));
    }
    if (batch == 1) step1 = best;
    std::printf("{\"what\":\"decode\",\"batch\":%zu,\"step_ms\":%.2f,\"tok_per_s\":%.2f", batch, best * 1e3,
                static_cast<double>(batch) / best);
    if (step1 > 0) std::printf(",\"step_vs_batch1\":%.3f", best / step1);
    if (batch == 1) {
      const double roof = bw * 1e9 / static_cast<double>(bytes_per_step);
      std::printf(",\"roofline_tok_per_s\":%.2f,\"ratio_to_roofline\":%.3f", roof, (1.0 / best) / roof);
    }
    std::printf("}\n");
    std::fflush(stdout);
  }
  // Bandwidth again after the decode runs: a shared machine's load changes.
  std::printf("{\"what\":\"read_bandwidth_after_decode\",\"gb_per_s\":%.2f}\n", ReadBandwidth(pool, bw_buf, 10));
  if (prefill > 0) {
    const double peak = SgemmPeak(2048);
    std::printf("{\"what\":\"sgemm_peak\",\"n\":2048,\"gflop_per_s\":%.1f,\"library\":\"OpenBLAS\"}\n", peak);
    ForwardBatch b;
    std::vector<int32_t> toks(prefill);
    for (size_t i = 0; i < prefill; ++i) toks[i] = static_cast<int32_t>((i * 7919) % cfg.vocab_size);
    std::vector<int32_t> blocks((prefill + bs - 1) / bs);
    std::iota(blocks.begin(), blocks.end(), 0);
    b.AddRequest(toks, 0, blocks, bs, true);
    b.FinishBlockTables();
    const auto t0 = Clock::now();
    CHECK(model.Forward(b, cache, &logits).ok());
    const double t = Seconds(t0, Clock::now());
    const double es = cfg.torch_dtype == "float32" ? 4 : 2;
    const double head = static_cast<double>(model.weights().lm_head.bytes()) / es;
    const double body = static_cast<double>(bytes_per_step) / es - head;
    const double gflops = 2.0 * (body * static_cast<double>(prefill) + head) / t / 1e9;
    std::printf("{\"what\":\"prefill\",\"tokens\":%zu,\"seconds\":%.3f,\"tok_per_s\":%.2f,"
                "\"weight_gflop_per_s\":%.1f,\"ratio_to_sgemm_peak\":%.3f}\n",
                prefill, t, static_cast<double>(prefill) / t, gflops, gflops / peak);
  }
  return 0;
}
