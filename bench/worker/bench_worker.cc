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
//   {"what":"decode_lora", "batch":B, "adapters":N, "rank":R, "step_ms":..., "vs_base":...}
//        (with --bench-lora-adapters N: the same decode step with the batch's rows spread
//         round-robin over N random rank-R PEFT adapters on all seven projections, its ratio
//         taken against the base model's step of the same batch measured just before it)
//   {"what":"lora_updates", "batch":B, "ms":..., "vs_base":...}
//        (the LoRA updates of that step alone: every layer's seven projections through
//         worker::LoraBatch on random activations, best of the decode steps' count)
//   {"what":"prefill_fp32_attention", "seconds":...}           (bf16 with bf16-product attention: the same
//                                                             prefill with the fp32 attention kernels, same rep)
// (weight GFLOP = 2 × (layer matmul parameters × tokens + lm_head parameters): the
// lm_head runs for the last token only.)
// The summary adds two physical bounds from the same repetition's bf16 peak and
// read bandwidth: the floor of each (b) ratio (a step can beat neither its matmul
// FLOPs at the peak nor one read of the weights) and the ceiling of (c) (the
// prefill's matmul FLOPs at the peak, all else free).
// For a mixture of experts the bytes and FLOPs are those of the experts a step
// is expected to touch (worker::ExpectedStepBytes): a token's k at batch 1.
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
#include <tuple>
#include <vector>

#include "kernels/cpu/amx_peak.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_dpbf16.h"

#include "common/flags.h"
#include "kernels/cpu/paged_attention.h"
#include "worker/forward_batch.h"
#include "worker/lora_batch.h"
#include "worker/model_loader.h"
#include "worker/kv_cache.h"
#include "worker/model_runner.h"
#include "worker/model.h"
#include "worker/test_lora_adapter.h"
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
DEFINE_int32(bench_lora_adapters, 0,
             "LoRA adapters (random PEFT factors on q/k/v/o/gate/up/down_proj, generated next to the model) the "
             "decode rows are spread over, measured against the base step of the same batch (0: no LoRA run).");
DEFINE_int32(bench_lora_rank, 16, "Rank of the --bench-lora-adapters adapters.");
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

// A figure's wall and cpu series, in the order figures first appear.
class Figures {
 public:
  void Add(const std::string& name, double wall, double cpu) {
    if (!fig_.count(name)) order_.push_back(name);
    fig_[name].first.Add(wall);
    fig_[name].second.Add(cpu);
  }
  // The summary table: best and median over repetitions, wall and cpu.
  void Print() {
    std::printf("%-40s %10s %10s %10s %10s\n", "figure [goal]", "wall best", "wall med", "cpu best", "cpu med");
    for (const std::string& name : order_) {
      const bool lower = name.find("/ b=1") != std::string::npos || name.find("/ base") != std::string::npos;
      const auto& [wall, cpu] = fig_[name];
      std::printf("%-40s %10.3f %10.3f %10.3f %10.3f\n", name.c_str(), wall.Best(!lower), wall.Median(),
                  cpu.Best(!lower), cpu.Median());
    }
  }

 private:
  std::map<std::string, std::pair<Series, Series>> fig_;  // name -> {wall series, cpu series}
  std::vector<std::string> order_;
};

// The model directory to measure: --bench-model, or the qwen3-0.6b preset
// generated into --bench-cache-dir on first use ("" after an error).
std::string ModelDir() {
  namespace w = llmserve::worker;
  std::string dir = FLAGS_bench_model;
  if (!dir.empty()) return dir;
  dir = FLAGS_bench_cache_dir + "/qwen3-0.6b-random";
  if (std::filesystem::exists(dir + "/config.json")) return dir;
  auto spec = w::TestModelPreset("qwen3-0.6b", "qwen3");
  CHECK(spec.ok());
  std::fprintf(stderr, "generating %s ...\n", dir.c_str());
  const auto st = w::WriteTestModel(*spec, dir);
  if (!st.ok()) {
    LOG(ERROR) << st.ToString();
    return "";
  }
  return dir;
}

// What every phase reads: the model, its KV cache and the run's shape.
struct Bench {
  llmserve::kernels::cpu::ThreadPool* pool;
  llmserve::worker::Model* model;
  llmserve::worker::KvCache* cache;
  std::vector<size_t> batches;
  size_t bs;              // KV block size
  size_t ctx;             // context tokens of each decode request
  size_t steps;           // timed decode steps per batch size
  size_t blocks_per_req;  // KV blocks of one decode request
  size_t prefill;         // prompt tokens of the prefill (0: none)
  size_t bytes_per_step;  // matmul weight bytes a one-token step reads (a MoE's chosen experts only)
  double prefill_flops;   // weight FLOPs of the prefill
  double decode_flops;    // weight FLOPs of one decode token
  size_t lora_adapters = 0;  // --bench-lora-adapters
  llmserve::worker::LoraSlots lora_slots;  // the same adapters, for timing their updates alone
  Bf16Peak bf16_peak;
  double peak_flops;      // FLOPs of one run of the peak loop on every thread
  std::vector<float> logits;
  Figures figures;
};

// This repetition's baselines: read bandwidth and bf16 peak, wall and cpu.
struct Baselines {
  double bw = 0, bw_cpu = 0;      // GB/s
  double peak = 0, peak_cpu = 0;  // GFLOP/s (0: no bf16 hardware)
};

Baselines MeasureBaselines(Bench& bench, const std::vector<uint64_t>& bw_buf, int rep) {
  Baselines out;
  const double bw_bytes = static_cast<double>(bw_buf.size() * sizeof(uint64_t));
  const Timing bw_t = ReadTime(*bench.pool, bw_buf, 10);
  out.bw = bw_bytes / bw_t.wall / 1e9;
  out.bw_cpu = bw_bytes / bw_t.cpu / 1e9;
  std::printf("{\"what\":\"read_bandwidth\",\"rep\":%d,\"gb_per_s\":%.2f,\"gb_per_s_cpu\":%.2f}\n", rep, out.bw,
              out.bw_cpu);
  bench.figures.Add("read bandwidth GB/s", out.bw, out.bw_cpu);
  // The bf16 peak of this repetition: what bounds (b) and (c) from below / above.
  Timing peak_t{0, 0};
  if (bench.bf16_peak.name != nullptr) peak_t = Bf16PeakSeconds(*bench.pool, bench.bf16_peak);
  out.peak = peak_t.wall > 0 ? bench.peak_flops / peak_t.wall / 1e9 : 0;
  out.peak_cpu = peak_t.cpu > 0 ? bench.peak_flops / peak_t.cpu / 1e9 : 0;
  if (out.peak > 0) {
    bench.figures.Add(std::string(bench.bf16_peak.name) + " bf16 peak GFLOP/s (all threads)", out.peak, out.peak_cpu);
  }
  return out;
}

// Best of the timed decode steps of `batch` requests (after an untimed
// prefill of their contexts); request r uses LoRA slot r % lora_adapters
// when lora_adapters > 0.
Timing TimeDecode(Bench& bench, size_t batch, size_t lora_adapters = 0) {
  auto slot_of = [&](size_t r) { return lora_adapters == 0 ? -1 : static_cast<int32_t>(r % lora_adapters); };
  const auto& cfg = bench.model->config();
  auto blocks_of = [&](size_t r) {
    std::vector<int32_t> b(bench.blocks_per_req);
    std::iota(b.begin(), b.end(), static_cast<int32_t>(r * bench.blocks_per_req));
    return b;
  };
  ForwardBatch pre;  // fill each request's context (untimed)
  for (size_t r = 0; r < batch; ++r) {
    std::vector<int32_t> toks(bench.ctx);
    for (size_t i = 0; i < bench.ctx; ++i) toks[i] = static_cast<int32_t>((r * 977 + i * 31) % cfg.vocab_size);
    pre.AddRequest(toks, 0, blocks_of(r), bench.bs, true, slot_of(r));
  }
  pre.FinishBlockTables();
  CHECK(bench.model->Forward(pre, *bench.cache, &bench.logits).ok());
  Timing best{1e30, 1e30};
  for (size_t s = 0; s < bench.steps; ++s) {
    ForwardBatch b;
    for (size_t r = 0; r < batch; ++r) {
      const float* row = &bench.logits[(bench.logits.size() / cfg.vocab_size == batch ? r : 0) * cfg.vocab_size];
      const int32_t next = static_cast<int32_t>(std::max_element(row, row + cfg.vocab_size) - row);
      b.AddRequest({next}, static_cast<int32_t>(bench.ctx + s), blocks_of(r), bench.bs, true, slot_of(r));
    }
    b.FinishBlockTables();
    Stopwatch sw(bench.pool->size());
    CHECK(bench.model->Forward(b, *bench.cache, &bench.logits).ok());
    best = Min(best, sw.Stop());
  }
  return best;
}

// Best time of one step's LoRA updates alone: `batch` rows spread over the
// adapters as TimeDecode spreads them, all seven projections of every layer.
Timing TimeLoraUpdates(Bench& bench, size_t batch) {
  namespace w = llmserve::worker;
  const auto& c = bench.model->config();
  const auto& d = bench.model->shard();
  const size_t h = c.hidden_size, q = d.num_heads * c.head_dim, kv = d.num_kv_heads * c.head_dim;
  const size_t ff = d.intermediate_size, widest = std::max({h, q + 2 * kv, 2 * ff});
  std::vector<float> x(batch * widest), y(batch * widest);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1000) * 1e-3f - 0.5f;
  std::vector<int32_t> slots(batch);
  for (size_t r = 0; r < batch; ++r) slots[r] = static_cast<int32_t>(r % bench.lora_adapters);
  w::LoraBatch rows;
  rows.Group(slots.data(), batch);
  // (target, input width, output width)
  const std::vector<std::tuple<w::LoraTarget, size_t, size_t>> targets = {
      {w::LoraTarget::kQ, h, q},       {w::LoraTarget::kK, h, kv},  {w::LoraTarget::kV, h, kv},
      {w::LoraTarget::kO, q, h},       {w::LoraTarget::kGate, h, ff}, {w::LoraTarget::kUp, h, ff},
      {w::LoraTarget::kDown, ff, h}};
  Timing best{1e30, 1e30};
  for (size_t s = 0; s < bench.steps; ++s) {
    Stopwatch sw(bench.pool->size());
    for (size_t layer = 0; layer < c.num_layers; ++layer) {
      for (const auto& [t, in, out] : targets) {
        rows.Apply(bench.lora_slots, layer, t, x.data(), in, y.data(), out, *bench.pool);
      }
    }
    best = Min(best, sw.Stop());
  }
  return best;
}

// The decode step of `batch` rows spread over the LoRA adapters, against
// `base`, the base model's step of the same batch just measured.
void MeasureLoraDecode(Bench& bench, size_t batch, const Timing& base, int rep) {
  const Timing t = TimeDecode(bench, batch, bench.lora_adapters);
  std::printf("{\"what\":\"decode_lora\",\"rep\":%d,\"batch\":%zu,\"adapters\":%zu,\"rank\":%d,"
              "\"step_ms\":%.2f,\"step_ms_cpu\":%.2f,\"vs_base\":%.3f}\n",
              rep, batch, bench.lora_adapters, FLAGS_bench_lora_rank, t.wall * 1e3, t.cpu * 1e3, t.wall / base.wall);
  std::fflush(stdout);
  const std::string b = std::to_string(batch);
  bench.figures.Add("(d) lora step b=" + b + " / base" + (batch == 16 ? " [<=1.15]" : ""), t.wall / base.wall,
                    t.cpu / base.cpu);
  const Timing u = TimeLoraUpdates(bench, batch);
  std::printf("{\"what\":\"lora_updates\",\"rep\":%d,\"batch\":%zu,\"ms\":%.2f,\"ms_cpu\":%.2f,\"vs_base\":%.3f}\n",
              rep, batch, u.wall * 1e3, u.cpu * 1e3, u.wall / base.wall);
  bench.figures.Add("(d) lora updates alone b=" + b + " / base", u.wall / base.wall, u.cpu / base.cpu);
}

// Loads --bench-lora-adapters random adapters (written once next to the
// model) into slots 0..N-1; false after an error.
bool LoadLoraAdapters(Bench& bench, llmserve::worker::Model& model, const std::string& model_dir, size_t n) {
  namespace w = llmserve::worker;
  w::LoraLimits limits;
  limits.max_rank = static_cast<size_t>(FLAGS_bench_lora_rank);
  for (size_t i = 0; i < n; ++i) {
    const std::string dir = FLAGS_bench_cache_dir + "/lora-r" + std::to_string(FLAGS_bench_lora_rank) + "-" +
                            std::to_string(i) + "-" + std::filesystem::path(model_dir).filename().string();
    if (!std::filesystem::exists(dir + "/adapter_config.json")) {
      w::TestLoraSpec spec;
      spec.rank = limits.max_rank;
      spec.lora_alpha = 2.0 * static_cast<double>(spec.rank);
      spec.seed = i + 1;
      spec.dtype = "bf16";
      std::fprintf(stderr, "generating %s ...\n", dir.c_str());
      const auto st = w::WriteTestLoraAdapter(spec, model_dir, dir);
      if (!st.ok()) {
        LOG(ERROR) << st.ToString();
        return false;
      }
    }
    auto slot = model.LoadLoraAdapter("bench-lora-" + std::to_string(i), dir, limits);
    if (!slot.ok()) {
      LOG(ERROR) << slot.status().ToString();
      return false;
    }
    CHECK_EQ(*slot, static_cast<int32_t>(i));
    auto adapter = w::LoadLoraAdapter("bench-lora-" + std::to_string(i), dir, model.config(), model.shard(), limits);
    if (!adapter.ok()) {
      LOG(ERROR) << adapter.status().ToString();
      return false;
    }
    bench.lora_slots.push_back(*adapter);
  }
  return true;
}

// Decode at every batch size: step time, and its ratios to the roofline (b=1)
// or to the b=1 step and that step's physical floor.
void MeasureDecode(Bench& bench, const Baselines& base, int rep) {
  Timing step1{0, 0};
  for (size_t batch : bench.batches) {
    const Timing best = TimeDecode(bench, batch);
    if (batch == 1) step1 = best;
    std::printf("{\"what\":\"decode\",\"rep\":%d,\"batch\":%zu,\"step_ms\":%.2f,\"step_ms_cpu\":%.2f,\"tok_per_s\":%.2f",
                rep, batch, best.wall * 1e3, best.cpu * 1e3, static_cast<double>(batch) / best.wall);
    if (step1.wall > 0) std::printf(",\"step_vs_batch1\":%.3f", best.wall / step1.wall);
    if (batch == 1) {
      const double roof = base.bw * 1e9 / static_cast<double>(bench.bytes_per_step);
      const double roof_cpu = base.bw_cpu * 1e9 / static_cast<double>(bench.bytes_per_step);
      std::printf(",\"roofline_tok_per_s\":%.2f,\"ratio_to_roofline\":%.3f", roof, (1.0 / best.wall) / roof);
      bench.figures.Add("(a) decode b=1 tok/s", 1.0 / best.wall, 1.0 / best.cpu);
      bench.figures.Add("(a) b=1 / roofline [>=0.95]", (1.0 / best.wall) / roof, (1.0 / best.cpu) / roof_cpu);
    } else if (step1.wall > 0) {
      const std::string b = std::to_string(batch);
      bench.figures.Add("(b) step b=" + b + " / b=1" + (batch == 16 ? " [<=1.3]" : ""), best.wall / step1.wall,
                        best.cpu / step1.cpu);
      if (base.peak > 0) {
        // No step can beat both its matmul FLOPs at the peak and one read of the weights.
        auto floor_s = [&](double gflop_per_s, double gb_per_s) {
          return std::max(static_cast<double>(batch) * bench.decode_flops / (gflop_per_s * 1e9),
                          llmserve::worker::ExpectedStepBytes(bench.model->weights(), bench.model->config().moe,
                                                              batch) /
                              (gb_per_s * 1e9));
        };
        bench.figures.Add("(b) floor of b=" + b + " / b=1 (peak, bandwidth)", floor_s(base.peak, base.bw) / step1.wall,
                          floor_s(base.peak_cpu, base.bw_cpu) / step1.cpu);
      }
    }
    std::printf("}\n");
    std::fflush(stdout);
    if (bench.lora_adapters > 0) MeasureLoraDecode(bench, batch, best, rep);
  }
}

// One prefill of bench.prefill tokens: throughput, its ratio to the bf16
// peak, and (with bf16-product attention) the same prefill with the fp32
// attention kernels as the baseline.
void MeasurePrefill(Bench& bench, const Baselines& base, int rep) {
  const auto& cfg = bench.model->config();
  const size_t prefill = bench.prefill;
  ForwardBatch b;
  std::vector<int32_t> toks(prefill);
  for (size_t i = 0; i < prefill; ++i) toks[i] = static_cast<int32_t>((i * 7919 + rep) % cfg.vocab_size);
  std::vector<int32_t> blocks((prefill + bench.bs - 1) / bench.bs);
  std::iota(blocks.begin(), blocks.end(), 0);
  b.AddRequest(toks, 0, blocks, bench.bs, true);
  b.FinishBlockTables();
  auto run_prefill = [&] {
    Stopwatch sw(bench.pool->size());
    CHECK(bench.model->Forward(b, *bench.cache, &bench.logits).ok());
    return sw.Stop();
  };
  // Baseline in the same repetition: the same prefill with the fp32
  // attention kernels (what bf16 models ran before the bf16-product attention).
  Timing fp32{0, 0};
  const bool bf16_attention = static_cast<int>(llmserve::kernels::cpu::ActiveIsa()) >=
                                  static_cast<int>(llmserve::kernels::cpu::Isa::kAvx512Bf16) &&
                              FLAGS_bench_precision == "bf16" && FLAGS_bench_attention_bf16;
  if (bf16_attention) {
    llmserve::kernels::cpu::PagedAttentionAllowBf16Products(false);
    fp32 = run_prefill();
    llmserve::kernels::cpu::PagedAttentionAllowBf16Products(true);
  }
  const Timing t = run_prefill();
  Figures& figures = bench.figures;
  if (bf16_attention) {
    std::printf("{\"what\":\"prefill_fp32_attention\",\"rep\":%d,\"seconds\":%.3f,\"seconds_cpu\":%.3f}\n", rep,
                fp32.wall, fp32.cpu);
    figures.Add("(c) prefill tok/s, fp32 attention", static_cast<double>(prefill) / fp32.wall,
                static_cast<double>(prefill) / fp32.cpu);
    figures.Add("(c) bf16-product attention speed-up (x)", fp32.wall / t.wall, fp32.cpu / t.cpu);
  }
  const double gflops = bench.prefill_flops / t.wall / 1e9, gflops_cpu = bench.prefill_flops / t.cpu / 1e9;
  std::printf("{\"what\":\"prefill\",\"rep\":%d,\"tokens\":%zu,\"seconds\":%.3f,\"seconds_cpu\":%.3f,"
              "\"tok_per_s\":%.2f,\"weight_gflop_per_s\":%.1f",
              rep, prefill, t.wall, t.cpu, static_cast<double>(prefill) / t.wall, gflops);
  figures.Add("(c) prefill " + std::to_string(prefill) + " tok/s [>=800]", static_cast<double>(prefill) / t.wall,
              static_cast<double>(prefill) / t.cpu);
  if (base.peak > 0) {
    const char* peak_name = bench.bf16_peak.name;
    std::printf(",\"peak\":\"%s\",\"peak_gflop_per_s\":%.0f,\"ratio_to_peak\":%.3f", peak_name, base.peak,
                gflops / base.peak);
    figures.Add("(c) prefill GFLOP/s / " + std::string(peak_name) + " peak", gflops / base.peak,
                gflops_cpu / base.peak_cpu);
    // The matmuls alone at the peak, attention and everything else free.
    const double tokens_per_gflop = static_cast<double>(prefill) / (bench.prefill_flops / 1e9);
    figures.Add("(c) prefill tok/s ceiling at that peak", base.peak * tokens_per_gflop,
                base.peak_cpu * tokens_per_gflop);
  }
  std::printf("}\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  llmserve::common::InitProcess(&argc, &argv,
      "llmserve-bench-worker: decode and prefill throughput of the CPU model runner.\n"
      "usage: llmserve-bench-worker [--bench-model DIR] [--bench-precision f32|bf16] [--bench-batches 1,4,16,64]");
  namespace w = llmserve::worker;
  namespace cpu = llmserve::kernels::cpu;
  if (FLAGS_bench_kv_dtype != "auto" && FLAGS_bench_kv_dtype != "f32" && FLAGS_bench_kv_dtype != "bf16") {
    std::fprintf(stderr, "--bench-kv-dtype must be auto, f32 or bf16, got '%s'\n", FLAGS_bench_kv_dtype.c_str());
    return 2;
  }
  const std::string dir = ModelDir();
  if (dir.empty()) return 1;
  cpu::PagedAttentionAllowAvx512(FLAGS_bench_attention_avx512);
  cpu::PagedAttentionAllowBf16Products(FLAGS_bench_attention_bf16);
  cpu::ThreadPool pool(static_cast<size_t>(std::max(0, FLAGS_bench_threads)));
  w::LoadOptions opts;
  opts.precision = FLAGS_bench_precision == "bf16" ? cpu::MatmulPrecision::kBF16 : cpu::MatmulPrecision::kF32;
  auto model_or = w::Model::Load(dir, opts, nullptr, &pool);
  if (!model_or.ok()) {
    LOG(ERROR) << model_or.status().ToString();
    return 1;
  }
  w::Model& model = **model_or;
  Bench bench;
  bench.lora_adapters = static_cast<size_t>(std::max(0, FLAGS_bench_lora_adapters));
  if (bench.lora_adapters > 0 &&
      (FLAGS_bench_lora_rank <= 0 || !LoadLoraAdapters(bench, model, dir, bench.lora_adapters))) {
    std::fprintf(stderr, "could not set up the --bench-lora-adapters adapters\n");
    return 1;
  }
  bench.pool = &pool;
  bench.model = &model;
  bench.bytes_per_step = static_cast<size_t>(w::ExpectedStepBytes(model.weights(), model.config().moe, 1));
  std::vector<uint64_t> bw_buf(static_cast<size_t>(FLAGS_bench_bandwidth_mib) * (1u << 20) / sizeof(uint64_t));
  for (size_t i = 0; i < bw_buf.size(); ++i) bw_buf[i] = i * 0x9e3779b97f4a7c15ull;
  std::printf("{\"what\":\"model\",\"dir\":\"%s\",\"weight_bytes_per_step\":%zu,\"precision\":\"%s\",\"threads\":%zu}\n",
              dir.c_str(), bench.bytes_per_step, FLAGS_bench_precision.c_str(), pool.size());
  std::fflush(stdout);

  std::stringstream ss(FLAGS_bench_batches);
  for (std::string item; std::getline(ss, item, ',');) bench.batches.push_back(std::stoul(item));
  bench.bs = w::kDefaultCpuBlockSize;
  bench.ctx = static_cast<size_t>(FLAGS_bench_context);
  bench.steps = static_cast<size_t>(std::max(1, FLAGS_bench_decode_steps));
  const int reps = std::max(1, FLAGS_bench_reps);
  bench.blocks_per_req = (bench.ctx + bench.steps * static_cast<size_t>(reps) + bench.bs - 1) / bench.bs;
  const size_t max_batch = bench.batches.empty() ? 1 : *std::max_element(bench.batches.begin(), bench.batches.end());
  bench.prefill = static_cast<size_t>(std::max(0, FLAGS_bench_prefill_tokens));
  const size_t num_blocks = std::max(max_batch * bench.blocks_per_req, (bench.prefill + bench.bs - 1) / bench.bs);
  const cpu::KvDType kv_dtype = w::KvDTypeFor(
      FLAGS_bench_kv_dtype == "bf16" ? "bfloat16" : FLAGS_bench_kv_dtype == "f32" ? "float32" : "auto", opts.precision);
  const char* kv_name = kv_dtype == cpu::KvDType::kBF16 ? "bf16" : "f32";
  std::printf("{\"what\":\"kv_cache\",\"dtype\":\"%s\"}\n", kv_name);
  w::KvCache cache(model.CacheShape(num_blocks, bench.bs, kv_dtype));
  bench.cache = &cache;
  bench.bf16_peak = Bf16PeakFor(cpu::GetCpuFeatures());
  bench.peak_flops = bench.bf16_peak.flops_per_iteration * static_cast<double>(bench.bf16_peak.iterations) *
                     static_cast<double>(pool.size());
  const double es = model.config().torch_dtype == "float32" ? 4 : 2;
  const double head = static_cast<double>(model.weights().lm_head.bytes()) / es;
  const double body = static_cast<double>(bench.bytes_per_step) / es - head;
  bench.prefill_flops = 2.0 * (body * static_cast<double>(bench.prefill) + head);
  bench.decode_flops = 2.0 * (body + head);  // per token

  for (int rep = 0; rep < reps; ++rep) {
    const Baselines base = MeasureBaselines(bench, bw_buf, rep);
    MeasureDecode(bench, base, rep);
    if (bench.prefill > 0) MeasurePrefill(bench, base, rep);
  }
  std::printf("\n=== llmserve-bench-worker summary: %d reps, %zu threads, %s weights, %s KV cache, isa %s ===\n", reps,
              pool.size(), FLAGS_bench_precision.c_str(), kv_name, std::string(cpu::IsaName(cpu::ActiveIsa())).c_str());
  std::printf("ratios are taken within each repetition; cpu = process CPU time / threads\n");
  bench.figures.Print();
  return 0;
}
