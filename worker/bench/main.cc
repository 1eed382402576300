// llmserve-bench-worker: end-to-end forward-pass throughput of the CPU model
// runner on the Qwen3-0.6B shape (or any model directory), with the
// machine's read-bandwidth roofline measured in the same run.
//
// Every measurement is repeated --bench-reps times; each repetition computes
// its ratios from its own baselines (the machine may be shared), and a
// summary table gives the best and the median over repetitions, from wall
// time and from process CPU time / threads (what the figure would be had no
// other process taken our cores).
//
// Reports, as JSON lines on stdout (one set per repetition):
//   {"what":"read_bandwidth", "gb_per_s":...}
//   {"what":"decode", "batch":B, "step_ms":..., "tok_per_s":..., "step_vs_batch1":...,
//    "roofline_tok_per_s":..., "ratio_to_roofline":...}        (roofline only at batch 1)
//   {"what":"prefill", "tokens":N, "tok_per_s":..., "weight_gflop_per_s":...,
//    "peak":"amx"|"avx512bf16", "peak_gflop_per_s":..., "ratio_to_peak":...}
//        (the bf16 compute peak of the kernels bf16 matmuls use, same rep, every thread:
//         tdpbf16ps with operands in tiles, or vdpbf16ps on registers without AMX)
//   {"what":"prefill_fp32_attention", "seconds":...}           (bf16 with bf16-product attention: the same
//                                                             prefill with the fp32 attention kernels, same rep)
// (weight GFLOP = 2 × (layer matmul parameters × tokens + lm_head parameters): the
// lm_head runs for the last token only.)
// The summary adds two physical bounds from the same repetition's bf16 peak and
// read bandwidth: the floor of each (b) ratio (a step can beat neither its matmul
// FLOPs at the peak nor one read of the weights) and the ceiling of (c) (the
// prefill's matmul FLOPs at the peak, all else free).
#include <immintrin.h>
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "kernels/cpu/amx_peak.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_dpbf16.h"

#include "common/flags.h"
#include "kernels/cpu/paged_attention.h"
#include "worker/forward_batch.h"
#include "worker/kv_cache.h"
#include "worker/model_runner.h"
#include "worker/model.h"
#include "worker/test_model.h"

DEFINE_string(bench_model, "", "Model directory; empty: generate the qwen3-0.6b preset into --bench-cache-dir.");
DEFINE_string(bench_cache_dir, "build/bench_models", "Where the generated qwen3-0.6b model is kept between runs.");
DEFINE_string(bench_precision, "bf16", "Matmul precision: f32 or bf16.");
DEFINE_int32(bench_reps, 3, "Repetitions of the whole measurement (best and median are reported).");
DEFINE_int32(bench_threads, 0, "Threads (0: all hardware threads).");
DEFINE_string(bench_batches, "1,4,16,64", "Decode batch sizes.");
DEFINE_int32(bench_decode_steps, 4, "Timed decode steps per batch size (best step is reported).");
DEFINE_int32(bench_prefill_tokens, 512, "Prompt length of the prefill measurement (0: skip).");
DEFINE_int32(bench_context, 16, "Prompt tokens each decode request holds before the timed steps.");
DEFINE_string(bench_kv_dtype, "auto",
              "KV cache element type: auto (as the server's --kv-cache-dtype default: bf16 when the matmuls are "
              "bf16), f32 or bf16.");
DEFINE_bool(bench_attention_avx512, true, "Let attention use its AVX-512 path (false: the portable one).");
DEFINE_bool(bench_attention_bf16, true,
            "bf16 on a CPU with AMX or AVX512-BF16: attention with bf16 products (AMX tiles or vdpbf16ps), with the "
            "fp32-attention prefill measured in the same repetition as its baseline (false: fp32 attention only).");
DEFINE_int32(bench_bandwidth_mib, 1024, "Size of the buffer read for the bandwidth roofline.");

namespace {

using Clock = std::chrono::steady_clock;
using llmserve::worker::ForwardBatch;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double ProcessCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Wall seconds and process CPU seconds / threads of one timed region.
struct Timing {
  double wall = 0, cpu = 0;
};

class Stopwatch {
 public:
  explicit Stopwatch(size_t threads) : threads_(static_cast<double>(threads)), t0_(Clock::now()), c0_(ProcessCpuSeconds()) {}
  Timing Stop() const { return {Seconds(t0_, Clock::now()), (ProcessCpuSeconds() - c0_) / threads_}; }

 private:
  double threads_;
  Clock::time_point t0_;
  double c0_;
};

Timing Min(const Timing& a, const Timing& b) { return {std::min(a.wall, b.wall), std::min(a.cpu, b.cpu)}; }


// The bf16 compute peak that kBF16 matmuls run against: AMX tiles when the
// CPU has them, otherwise vdpbf16ps (AVX512-BF16); none without either.
struct Bf16Peak {
  const char* name = nullptr;  // "amx", "avx512bf16"; null: no bf16 hardware
  bool amx = false;
  double flops_per_iteration = 0;
  size_t iterations = 0;
};

Bf16Peak Bf16PeakFor(const llmserve::kernels::cpu::CpuFeatures& f) {
  if (f.amx) return {"amx", true, llmserve::kernels::cpu::kAmxPeakFlopsPerIteration, size_t{1} << 16};
  if (f.avx512_bf16) return {"avx512bf16", false, llmserve::kernels::cpu::dpbf16::kDpbf16PeakFlopsPerIteration, size_t{1} << 20};
  return {};
}

// Best-of-5 time of the peak loop with every pool thread running it.
Timing Bf16PeakSeconds(llmserve::kernels::cpu::ThreadPool& pool, const Bf16Peak& peak) {
  Timing best{1e30, 1e30};
  std::vector<float> sink(pool.size());
  for (int rep = 0; rep < 5; ++rep) {
    Stopwatch sw(pool.size());
    pool.ParallelFor(pool.size(), 1, [&](size_t, size_t, size_t t) {
      if (peak.amx) {
        llmserve::kernels::cpu::AmxPeakLoop(peak.iterations);
      } else {
        sink[t] = llmserve::kernels::cpu::dpbf16::Dpbf16PeakLoop(peak.iterations);
      }
    });
    best = Min(best, sw.Stop());
  }
  volatile float keep = std::accumulate(sink.begin(), sink.end(), 0.f);  // the loops' results stay live
  (void)keep;
  return best;
}

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

// Best-of-`reps` time to read a large buffer with every pool thread.
Timing ReadTime(llmserve::kernels::cpu::ThreadPool& pool, const std::vector<uint64_t>& buf, int reps) {
  const size_t n = buf.size();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::vector<uint64_t> sink(pool.size());
  Timing best{1e30, 1e30};
  for (int rep = 0; rep < reps; ++rep) {
    Stopwatch sw(pool.size());
    pool.ParallelFor(n, 1 << 16, [&](size_t begin, size_t end, size_t thread) {
      sink[thread] = avx512 ? XorAvx512(buf.data(), begin, end) : XorPortable(buf.data(), begin, end);
    });
    best = Min(best, sw.Stop());
  }
  if (std::accumulate(sink.begin(), sink.end(), uint64_t{0}) == 42) std::fputs("", stderr);
  return best;
}

// Best and median of a figure over repetitions.
struct Series {
  std::vector<double> values;
  void Add(double v) { values.push_back(v); }
  double Best(bool higher_is_better) const {
    return higher_is_better ? *std::max_element(values.begin(), values.end())
                            : *std::min_element(values.begin(), values.end());
  }
  double Median() const {
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
};

}  // namespace

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-bench-worker: decode and prefill throughput of the CPU model runner.\n"
      "usage: llmserve-bench-worker [--bench-model DIR] [--bench-precision f32|bf16] [--bench-batches 1,4,16,64]");
  namespace w = llmserve::worker;
  if (FLAGS_bench_kv_dtype != "auto" && FLAGS_bench_kv_dtype != "f32" && FLAGS_bench_kv_dtype != "bf16") {
    std::fprintf(stderr, "--bench-kv-dtype must be auto, f32 or bf16, got '%s'\n", FLAGS_bench_kv_dtype.c_str());
    return 2;
  }
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
  llmserve::kernels::cpu::PagedAttentionAllowBf16Products(FLAGS_bench_attention_bf16);
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
  const double bw_bytes = static_cast<double>(bw_buf.size() * sizeof(uint64_t));
  std::printf("{\"what\":\"model\",\"dir\":\"%s\",\"weight_bytes_per_step\":%zu,\"precision\":\"%s\",\"threads\":%zu}\n",
              dir.c_str(), bytes_per_step, FLAGS_bench_precision.c_str(), pool.size());
  std::fflush(stdout);

  std::vector<size_t> batches;
  std::stringstream ss(FLAGS_bench_batches);
  for (std::string item; std::getline(ss, item, ',');) batches.push_back(std::stoul(item));
  const size_t bs = w::kDefaultCpuBlockSize, ctx = static_cast<size_t>(FLAGS_bench_context);
  const size_t steps = static_cast<size_t>(std::max(1, FLAGS_bench_decode_steps));
  const int reps = std::max(1, FLAGS_bench_reps);
  const size_t blocks_per_req = (ctx + steps * static_cast<size_t>(reps) + bs - 1) / bs;
  const size_t max_batch = batches.empty() ? 1 : *std::max_element(batches.begin(), batches.end());
  const size_t prefill = static_cast<size_t>(std::max(0, FLAGS_bench_prefill_tokens));
  const size_t num_blocks = std::max(max_batch * blocks_per_req, (prefill + bs - 1) / bs);
  const llmserve::kernels::cpu::KvDType kv_dtype = w::KvDTypeFor(
      FLAGS_bench_kv_dtype == "bf16" ? "bfloat16" : FLAGS_bench_kv_dtype == "f32" ? "float32" : "auto", opts.precision);
  const char* kv_name = kv_dtype == llmserve::kernels::cpu::KvDType::kBF16 ? "bf16" : "f32";
  std::printf("{\"what\":\"kv_cache\",\"dtype\":\"%s\"}\n", kv_name);
  w::KvCache cache(model.CacheShape(num_blocks, bs, kv_dtype));
  const Bf16Peak bf16_peak = Bf16PeakFor(llmserve::kernels::cpu::GetCpuFeatures());
  const double peak_flops =
      bf16_peak.flops_per_iteration * static_cast<double>(bf16_peak.iterations) * static_cast<double>(pool.size());
  const double es = cfg.torch_dtype == "float32" ? 4 : 2;
  const double head = static_cast<double>(model.weights().lm_head.bytes()) / es;
  const double body = static_cast<double>(bytes_per_step) / es - head;
  const double prefill_flops = 2.0 * (body * static_cast<double>(prefill) + head);
  const double decode_flops = 2.0 * (body + head);  // per token
  // Figures per repetition: name -> {wall series, cpu series}.
  std::map<std::string, std::pair<Series, Series>> fig;
  std::vector<std::string> order;
  auto add = [&](const std::string& name, double wall, double cpu) {
    if (!fig.count(name)) order.push_back(name);
    fig[name].first.Add(wall);
    fig[name].second.Add(cpu);
  };
  std::vector<float> logits;
  for (int rep = 0; rep < reps; ++rep) {
    const Timing bw_t = ReadTime(pool, bw_buf, 10);
    const double bw = bw_bytes / bw_t.wall / 1e9, bw_cpu = bw_bytes / bw_t.cpu / 1e9;
    std::printf("{\"what\":\"read_bandwidth\",\"rep\":%d,\"gb_per_s\":%.2f,\"gb_per_s_cpu\":%.2f}\n", rep, bw, bw_cpu);
    add("read bandwidth GB/s", bw, bw_cpu);
    // The bf16 peak of this repetition: what bounds (b) and (c) from below / above.
    Timing peak_t{0, 0};
    if (bf16_peak.name != nullptr) peak_t = Bf16PeakSeconds(pool, bf16_peak);
    const double peak = peak_t.wall > 0 ? peak_flops / peak_t.wall / 1e9 : 0;
    const double peak_cpu = peak_t.cpu > 0 ? peak_flops / peak_t.cpu / 1e9 : 0;
    if (peak > 0) add(std::string(bf16_peak.name) + " bf16 peak GFLOP/s (all threads)", peak, peak_cpu);
    Timing step1{0, 0};
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
      Timing best{1e30, 1e30};
      for (size_t s = 0; s < steps; ++s) {
        ForwardBatch b;
        for (size_t r = 0; r < batch; ++r) {
          const float* row = &logits[(logits.size() / cfg.vocab_size == batch ? r : 0) * cfg.vocab_size];
          const int32_t next = static_cast<int32_t>(std::max_element(row, row + cfg.vocab_size) - row);
          b.AddRequest({next}, static_cast<int32_t>(ctx + s), blocks_of(r), bs, true);
        }
        b.FinishBlockTables();
        Stopwatch sw(pool.size());
        CHECK(model.Forward(b, cache, &logits).ok());
        best = Min(best, sw.Stop());
      }
      if (batch == 1) step1 = best;
      std::printf("{\"what\":\"decode\",\"rep\":%d,\"batch\":%zu,\"step_ms\":%.2f,\"step_ms_cpu\":%.2f,\"tok_per_s\":%.2f",
                  rep, batch, best.wall * 1e3, best.cpu * 1e3, static_cast<double>(batch) / best.wall);
      if (step1.wall > 0) std::printf(",\"step_vs_batch1\":%.3f", best.wall / step1.wall);
      if (batch == 1) {
        const double roof = bw * 1e9 / static_cast<double>(bytes_per_step);
        const double roof_cpu = bw_cpu * 1e9 / static_cast<double>(bytes_per_step);
        std::printf(",\"roofline_tok_per_s\":%.2f,\"ratio_to_roofline\":%.3f", roof, (1.0 / best.wall) / roof);
        add("(a) decode b=1 tok/s", 1.0 / best.wall, 1.0 / best.cpu);
        add("(a) b=1 / roofline [>=0.95]", (1.0 / best.wall) / roof, (1.0 / best.cpu) / roof_cpu);
      } else if (step1.wall > 0) {
        const std::string b = std::to_string(batch);
        add("(b) step b=" + b + " / b=1" + (batch == 16 ? " [<=1.3]" : ""), best.wall / step1.wall,
            best.cpu / step1.cpu);
        if (peak > 0) {
          // No step can beat both its matmul FLOPs at the peak and one read of the weights.
          auto floor_s = [&](double gflop_per_s, double gb_per_s) {
            return std::max(static_cast<double>(batch) * decode_flops / (gflop_per_s * 1e9),
                            static_cast<double>(bytes_per_step) / (gb_per_s * 1e9));
          };
          add("(b) floor of b=" + b + " / b=1 (peak, bandwidth)", floor_s(peak, bw) / step1.wall,
              floor_s(peak_cpu, bw_cpu) / step1.cpu);
        }
      }
      std::printf("}\n");
      std::fflush(stdout);
    }
    if (prefill > 0) {
      ForwardBatch b;
      std::vector<int32_t> toks(prefill);
      for (size_t i = 0; i < prefill; ++i) toks[i] = static_cast<int32_t>((i * 7919 + rep) % cfg.vocab_size);
      std::vector<int32_t> blocks((prefill + bs - 1) / bs);
      std::iota(blocks.begin(), blocks.end(), 0);
      b.AddRequest(toks, 0, blocks, bs, true);
      b.FinishBlockTables();
      auto run_prefill = [&] {
        Stopwatch sw(pool.size());
        CHECK(model.Forward(b, cache, &logits).ok());
        return sw.Stop();
      };
      // Baseline in the same repetition: the same prefill with the fp32
      // attention kernels (what bf16 models ran before the bf16-product attention).
      Timing base{0, 0};
      const bool bf16_attention = static_cast<int>(llmserve::kernels::cpu::ActiveIsa()) >=
                                      static_cast<int>(llmserve::kernels::cpu::Isa::kAvx512Bf16) &&
                                  FLAGS_bench_precision == "bf16" && FLAGS_bench_attention_bf16;
      if (bf16_attention) {
        llmserve::kernels::cpu::PagedAttentionAllowBf16Products(false);
        base = run_prefill();
        llmserve::kernels::cpu::PagedAttentionAllowBf16Products(true);
      }
      const Timing t = run_prefill();
      if (bf16_attention) {
        std::printf("{\"what\":\"prefill_fp32_attention\",\"rep\":%d,\"seconds\":%.3f,\"seconds_cpu\":%.3f}\n", rep,
                    base.wall, base.cpu);
        add("(c) prefill tok/s, fp32 attention", static_cast<double>(prefill) / base.wall,
            static_cast<double>(prefill) / base.cpu);
        add("(c) bf16-product attention speed-up (x)", base.wall / t.wall, base.cpu / t.cpu);
      }
      const double gflops = prefill_flops / t.wall / 1e9, gflops_cpu = prefill_flops / t.cpu / 1e9;
      std::printf("{\"what\":\"prefill\",\"rep\":%d,\"tokens\":%zu,\"seconds\":%.3f,\"seconds_cpu\":%.3f,"
                  "\"tok_per_s\":%.2f,\"weight_gflop_per_s\":%.1f",
                  rep, prefill, t.wall, t.cpu, static_cast<double>(prefill) / t.wall, gflops);
      add("(c) prefill " + std::to_string(prefill) + " tok/s [>=800]", static_cast<double>(prefill) / t.wall,
          static_cast<double>(prefill) / t.cpu);
      if (peak > 0) {
        std::printf(",\"peak\":\"%s\",\"peak_gflop_per_s\":%.0f,\"ratio_to_peak\":%.3f", bf16_peak.name, peak,
                    gflops / peak);
        add("(c) prefill GFLOP/s / " + std::string(bf16_peak.name) + " peak", gflops / peak, gflops_cpu / peak_cpu);
        // The matmuls alone at the peak, attention and everything else free.
        const double tokens_per_gflop = static_cast<double>(prefill) / (prefill_flops / 1e9);
        add("(c) prefill tok/s ceiling at that peak", peak * tokens_per_gflop, peak_cpu * tokens_per_gflop);
      }
      std::printf("}\n");
      std::fflush(stdout);
    }
  }
  std::printf("\n=== llmserve-bench-worker summary: %d reps, %zu threads, %s weights, %s KV cache, isa %s ===\n", reps,
              pool.size(), FLAGS_bench_precision.c_str(), kv_name,
              std::string(llmserve::kernels::cpu::IsaName(llmserve::kernels::cpu::ActiveIsa())).c_str());
  std::printf("ratios are taken within each repetition; cpu = process CPU time / threads\n");
  std::printf("%-40s %10s %10s %10s %10s\n", "figure [goal]", "wall best", "wall med", "cpu best", "cpu med");
  for (const std::string& name : order) {
    const bool lower = name.find("/ b=1") != std::string::npos;
    const auto& [wall, cpu] = fig[name];
    std::printf("%-40s %10.3f %10.3f %10.3f %10.3f\n", name.c_str(), wall.Best(!lower), wall.Median(),
                cpu.Best(!lower), cpu.Median());
  }
  return 0;
}
