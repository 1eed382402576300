// What prefix caching costs and what it buys, end to end on a real model in
// this process (EngineCore + in-process executor; the same calls the offline
// LLM class and `llmserve bench throughput` make).
//
//   build/bin/prefix_cache_bench [--preset tiny|qwen3-0.6b | --model DIR]
//       [--num-prompts 32 --prompt-len 256 --output-len 32 --repeats 10]
//       [--ttft-prompt-len 1024 --shared-fraction 0.9 --ttft-repeats 6]
//       [--output-json FILE] [engine flags: --dtype, --block-size, ...]
//
// 1. Overhead at a 0 % hit rate. Two engines, prefix caching on and off, run
//    the same batch of --num-prompts never-seen random prompts (all submitted
//    at once, --output-len tokens each); each repeat uses a new batch, and
//    the two engines alternate which goes first (on/off, off/on, ...) so
//    drift in machine load hits both alike. The time includes AddRequest,
//    where the prompt's block hashes are computed in this process (the
//    engine's input thread does it in serving). The KV cache holds about 1.5
//    batches, so from the second batch on the caching engine also evicts
//    hashed blocks, as in steady serving. Reported: the per-pair ratio of
//    throughput (on / off), its median and spread.
//    On a shared machine that wall-clock ratio swings by several percent, so
//    the bench also isolates what caching adds: the engine thread's CPU time
//    outside the model (AddRequest with its hashing, Schedule, Update; an
//    executor wrapper subtracts the thread's time in ExecuteModel), on minus
//    off, as a fraction of the batch's wall time with caching off.
// 2. Time to first token with a shared prefix (caching on). Per repeat: a
//    fresh --ttft-prompt-len prompt runs to completion; then a prompt sharing
//    its first --shared-fraction of tokens, and one sharing nothing, each
//    alone (alternating which goes first). Reported: both TTFTs and the
//    per-repeat ratio TTFT(no shared prefix) / TTFT(shared prefix).
//
// Sampling is greedy by default (--temperature 0) so that the model, not
// the sampler, dominates a step.

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "common/flags.h"
#include "deploy/bench/offline_batch.h"
#include "deploy/bench/offline_options.h"
#include "deploy/engine_flags.h"
#include "engine_core/engine_factory.h"
#include "worker/model_config.h"
#include "worker/test_model.h"

DEFINE_string(model, "", "Model directory; empty = write the --preset model (random weights) to a temporary directory.");
DEFINE_string(preset, "tiny", "Model shape when --model is empty: tiny or qwen3-0.6b.");
DEFINE_int32(num_prompts, 32, "Overhead test: prompts per batch (all unique).");
DEFINE_int32(prompt_len, 256, "Overhead test: tokens per prompt.");
DEFINE_int32(output_len, 32, "Overhead test: output tokens per prompt.");
DEFINE_int32(repeats, 10, "Overhead test: on/off pairs measured (after one warm-up batch each).");
DEFINE_int32(ttft_prompt_len, 1024, "TTFT test: tokens per prompt.");
DEFINE_double(shared_fraction, 0.9, "TTFT test: fraction of the prompt shared with an earlier finished request.");
DEFINE_int32(ttft_repeats, 6, "TTFT test: repeats (each with a new base prompt).");
DEFINE_double(temperature, 0.0, "Sampling temperature (0 = greedy).");
DEFINE_string(output_json, "", "Also write the figures as JSON to this file.");

namespace llmserve {
namespace {

using deploy::OfflineBatchResult;
using deploy::OfflineRequest;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Times the model apart from the engine: the calling thread's CPU time spent
// inside ExecuteModel. The engine's own work (AddRequest, Schedule, Update)
// runs on that thread too, so its CPU time outside ExecuteModel is the
// engine's bookkeeping cost, unaffected by time the thread spends preempted.
class TimingExecutor final : public engine_core::Executor {
 public:
  explicit TimingExecutor(std::unique_ptr<engine_core::Executor> inner) : inner_(std::move(inner)) {}
  StatusOr<int32_t> Initialize(const engine_core::KVCacheConfig& config) override { return inner_->Initialize(config); }
  StatusOr<proto::ModelRunnerOutput> ExecuteModel(const proto::SchedulerOutput& output) override {
    const double cpu = ThreadCpuSeconds();
    auto result = inner_->ExecuteModel(output);
    model_thread_cpu_s_ += ThreadCpuSeconds() - cpu;
    return result;
  }
  Status CheckHealth() override { return inner_->CheckHealth(); }
  void Shutdown() override { inner_->Shutdown(); }
  // Calling-thread CPU seconds spent in ExecuteModel so far.
  double model_thread_cpu_s() const { return model_thread_cpu_s_; }

 private:
  std::unique_ptr<engine_core::Executor> inner_;
  double model_thread_cpu_s_ = 0;
};

// An engine with its timing executor.
struct TimedEngine {
  engine_core::BuiltEngine built;
  const TimingExecutor* timing = nullptr;
};

StatusOr<TimedEngine> BuildTimedEngine(const proto::EngineConfig& config, int32_t index) {
  TimedEngine e;
  auto wrap = [&e](std::unique_ptr<engine_core::Executor> inner) -> std::unique_ptr<engine_core::Executor> {
    auto t = std::make_unique<TimingExecutor>(std::move(inner));
    e.timing = t.get();
    return t;
  };
  LLMSERVE_ASSIGN_OR_RETURN(e.built, engine_core::BuildEngineCore(config, index, wrap));
  return e;
}

// Ids below the model's vocabulary size and the Qwen3 tokenizer's specials.
int32_t g_token_limit = 151643;

std::vector<int32_t> RandomTokens(std::mt19937_64& rng, size_t n) {
  std::uniform_int_distribution<int32_t> token(0, g_token_limit - 1);
  std::vector<int32_t> ids(n);
  for (auto& t : ids) t = token(rng);
  return ids;
}

struct Summary {
  double median = 0, mean = 0, min = 0, max = 0, stddev = 0;
};

Summary Summarize(const std::vector<double>& v) {
  Summary s;
  if (v.empty()) return s;
  s.median = deploy::Percentile(v, 50);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(s.stddev / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

nlohmann::json ToJson(const Summary& s) {
  return {{"median", s.median}, {"mean", s.mean}, {"min", s.min}, {"max", s.max}, {"stddev", s.stddev}};
}

// One timed batch, with the CPU time it took.
struct Run {
  OfflineBatchResult result;
  double engine_cpu_s = 0;  // this thread's CPU time outside ExecuteModel
};

StatusOr<Run> Time(TimedEngine& engine, const std::vector<OfflineRequest>& batch,
                   const proto::SamplingParams& sampling) {
  Run run;
  const double thread = ThreadCpuSeconds(), model = engine.timing->model_thread_cpu_s();
  LLMSERVE_ASSIGN_OR_RETURN(run.result, deploy::RunOfflineBatch(*engine.built.core, batch, sampling));
  run.engine_cpu_s = (ThreadCpuSeconds() - thread) - (engine.timing->model_thread_cpu_s() - model);
  return run;
}

std::vector<OfflineRequest> UniqueBatch(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<OfflineRequest> batch(static_cast<size_t>(FLAGS_num_prompts));
  for (auto& r : batch) {
    r.prompt_token_ids = RandomTokens(rng, static_cast<size_t>(FLAGS_prompt_len));
    r.max_tokens = FLAGS_output_len;
  }
  return batch;
}

// Part 1: throughput at a 0 % hit rate, caching on vs off, in alternated
// pairs; prints the figures and puts them in (*json)["overhead"].
Status MeasureThroughput(TimedEngine& on, TimedEngine& off, const proto::SamplingParams& sampling,
                         const std::string& model_dir, nlohmann::json* json) {
  std::printf("model %s, block size %u; %d unique prompts x %d tokens, %d output tokens each\n", model_dir.c_str(),
              on.built.block_size, FLAGS_num_prompts, FLAGS_prompt_len, FLAGS_output_len);
  LLMSERVE_RETURN_IF_ERROR(Time(on, UniqueBatch(1), sampling).status());  // warm-up
  LLMSERVE_RETURN_IF_ERROR(Time(off, UniqueBatch(2), sampling).status());
  std::vector<double> ratios, on_tps, off_tps, on_add_share, off_add_share, engine_loss, on_engine_share;
  int64_t on_cached = 0, preemptions = 0;
  for (int i = 0; i < FLAGS_repeats; ++i) {
    const auto batch = UniqueBatch(1000 + static_cast<uint64_t>(i));
    Run a, b;  // a: caching on, b: off
    for (int k = 0; k < 2; ++k) {
      const bool run_on = (k == 0) == (i % 2 == 0);
      LLMSERVE_ASSIGN_OR_RETURN(Run run, Time(run_on ? on : off, batch, sampling));
      (run_on ? a : b) = std::move(run);
    }
    const double tokens = static_cast<double>(a.result.prompt_tokens + a.result.output_tokens);
    on_tps.push_back(tokens / a.result.elapsed_s);
    off_tps.push_back(tokens / b.result.elapsed_s);
    ratios.push_back(b.result.elapsed_s / a.result.elapsed_s);
    engine_loss.push_back((a.engine_cpu_s - b.engine_cpu_s) / b.result.elapsed_s);
    on_engine_share.push_back(a.engine_cpu_s / a.result.elapsed_s);
    on_add_share.push_back(a.result.add_requests_s / a.result.elapsed_s);
    off_add_share.push_back(b.result.add_requests_s / b.result.elapsed_s);
    on_cached += a.result.cached_tokens;
    preemptions += a.result.num_preemptions + b.result.num_preemptions;
    std::printf("  pair %2d (%s first): on %.1f tok/s, off %.1f tok/s, ratio %.4f; engine CPU on %.1f ms, off %.1f ms\n",
                i, i % 2 == 0 ? "on" : "off", on_tps.back(), off_tps.back(), ratios.back(),
                a.engine_cpu_s * 1e3, b.engine_cpu_s * 1e3);
  }
  const Summary ratio = Summarize(ratios);
  const Summary on_add = Summarize(on_add_share), off_add = Summarize(off_add_share);
  const Summary loss = Summarize(engine_loss), engine_share = Summarize(on_engine_share);
  std::printf("throughput on/off: median %.4f (loss %.2f %%), mean %.4f, stddev %.4f, min %.4f, max %.4f\n",
              ratio.median, (1 - ratio.median) * 100, ratio.mean, ratio.stddev, ratio.min, ratio.max);
  std::printf("engine CPU (caching on - off) / batch time: median %.3f %%, min %.3f %%, max %.3f %% "
              "(engine CPU share of the batch with caching on: %.2f %%)\n",
              loss.median * 100, loss.min * 100, loss.max * 100, engine_share.median * 100);
  std::printf("AddRequest share of the batch time: on %.3f %%, off %.3f %% (medians)\n", on_add.median * 100,
              off_add.median * 100);
  std::printf("prefix cache hits with caching on: %lld tokens; preemptions: %lld\n",
              static_cast<long long>(on_cached), static_cast<long long>(preemptions));

  (*json)["overhead"] = {
      {"num_prompts", FLAGS_num_prompts}, {"prompt_len", FLAGS_prompt_len}, {"output_len", FLAGS_output_len},
      {"repeats", FLAGS_repeats}, {"throughput_ratio_on_off", ToJson(ratio)},
      {"engine_cpu_loss_fraction", ToJson(loss)},
      {"engine_cpu_share_on", ToJson(engine_share)}, {"tokens_per_second_on", on_tps},
      {"tokens_per_second_off", off_tps}, {"add_request_share_on", ToJson(on_add)},
      {"add_request_share_off", ToJson(off_add)}, {"prefix_cache_hit_tokens", on_cached},
      {"num_preemptions", preemptions}};
  return Status::Ok();
}

// Part 2: TTFT with a shared prefix vs none, caching on; prints the figures
// and puts them in (*json)["ttft"].
Status MeasureTtft(TimedEngine& on, const proto::SamplingParams& sampling, nlohmann::json* json) {
  const auto shared_len = static_cast<size_t>(std::llround(FLAGS_shared_fraction * FLAGS_ttft_prompt_len));
  std::printf("TTFT: %d-token prompts, %zu shared with a finished request vs none\n", FLAGS_ttft_prompt_len, shared_len);
  std::mt19937_64 rng(77);
  auto single = [&](std::vector<int32_t> ids) {
    return std::vector<OfflineRequest>{OfflineRequest{std::move(ids), 1}};
  };
  LLMSERVE_RETURN_IF_ERROR(Time(on, single(RandomTokens(rng, FLAGS_ttft_prompt_len)), sampling).status());
  std::vector<double> shared_ttft, unique_ttft, speedups;
  int64_t shared_cached = 0, unique_cached = 0;
  for (int i = 0; i < FLAGS_ttft_repeats; ++i) {
    const auto base = RandomTokens(rng, FLAGS_ttft_prompt_len);
    LLMSERVE_RETURN_IF_ERROR(Time(on, single(base), sampling).status());
    auto shared = std::vector<int32_t>(base.begin(), base.begin() + static_cast<std::ptrdiff_t>(shared_len));
    const auto tail = RandomTokens(rng, FLAGS_ttft_prompt_len - shared_len);
    shared.insert(shared.end(), tail.begin(), tail.end());
    const auto unique = RandomTokens(rng, FLAGS_ttft_prompt_len);
    double t_shared = 0, t_unique = 0;
    for (int k = 0; k < 2; ++k) {
      const bool run_shared = (k == 0) == (i % 2 == 0);
      LLMSERVE_ASSIGN_OR_RETURN(Run run, Time(on, single(run_shared ? shared : unique), sampling));
      const auto& r = run.result.requests[0];
      (run_shared ? t_shared : t_unique) = r.ttft_s;
      (run_shared ? shared_cached : unique_cached) += r.cached_tokens;
    }
    shared_ttft.push_back(t_shared);
    unique_ttft.push_back(t_unique);
    speedups.push_back(t_unique / t_shared);
    std::printf("  repeat %2d: TTFT shared %.2f ms, none %.2f ms, ratio %.2f\n", i, t_shared * 1e3, t_unique * 1e3,
                speedups.back());
  }
  const Summary ts = Summarize(shared_ttft), tu = Summarize(unique_ttft), sp = Summarize(speedups);
  std::printf("TTFT shared prefix: median %.2f ms; no shared prefix: median %.2f ms\n", ts.median * 1e3, tu.median * 1e3);
  std::printf("TTFT none/shared: median %.2f, min %.2f, max %.2f; cached tokens per shared request %lld, per unique %lld\n",
              sp.median, sp.min, sp.max, static_cast<long long>(shared_cached / FLAGS_ttft_repeats),
              static_cast<long long>(unique_cached / FLAGS_ttft_repeats));

  (*json)["ttft"] = {
      {"prompt_len", FLAGS_ttft_prompt_len}, {"shared_tokens", shared_len}, {"repeats", FLAGS_ttft_repeats},
      {"shared_s", ToJson(ts)}, {"unique_s", ToJson(tu)}, {"ratio_unique_shared", ToJson(sp)},
      {"cached_tokens_per_shared_request", shared_cached / FLAGS_ttft_repeats}};
  return Status::Ok();
}

Status Main() {
  if (FLAGS_num_prompts < 1 || FLAGS_prompt_len < 1 || FLAGS_output_len < 1 || FLAGS_repeats < 1 ||
      FLAGS_ttft_prompt_len < 2 || FLAGS_ttft_repeats < 1)
    return Status::InvalidArgument("counts and lengths must be positive (--ttft-prompt-len at least 2)");
  if (!(FLAGS_shared_fraction > 0 && FLAGS_shared_fraction < 1))
    return Status::InvalidArgument("--shared-fraction must be in (0, 1)");

  std::string model_dir = FLAGS_model;
  std::filesystem::path temp;
  if (model_dir.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(worker::TestModelSpec spec, worker::TestModelPreset(FLAGS_preset, "qwen3"));
    spec.seed = 7;
    temp = std::filesystem::temp_directory_path() / ("prefix_cache_bench." + std::to_string(getpid()));
    model_dir = temp.string();
    LLMSERVE_RETURN_IF_ERROR(worker::WriteTestModel(spec, model_dir));
  }
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{temp};

  LLMSERVE_ASSIGN_OR_RETURN(worker::ModelConfig model_config, worker::LoadModelConfig(model_dir));
  g_token_limit = static_cast<int32_t>(std::min<size_t>(model_config.vocab_size, 151643));
  proto::EngineConfig config;
  LLMSERVE_RETURN_IF_ERROR(deploy::EngineConfigFromFlags(model_dir, &config));
  const int64_t longest = std::max(FLAGS_prompt_len, FLAGS_ttft_prompt_len) + FLAGS_output_len;
  if (config.model().max_model_len() == 0) config.mutable_model()->set_max_model_len(static_cast<uint32_t>(longest));
  if (gflags::GetCommandLineFlagInfoOrDie("kv_cache_memory").is_default) {
    // About 1.5 batches (so batches evict each other's hashed blocks), and
    // room for several max_model_len requests.
    const int64_t bs = config.cache().block_size() ? config.cache().block_size() : 16;
    const int64_t per_request = (FLAGS_prompt_len + FLAGS_output_len + bs - 1) / bs;
    const int64_t per_long = (config.model().max_model_len() + bs - 1) / bs;
    const int64_t blocks = std::max<int64_t>(FLAGS_num_prompts * per_request * 3 / 2, 4 * per_long) + 1;
    config.mutable_cache()->set_num_kv_blocks_override(static_cast<uint32_t>(blocks));
  }
  config.mutable_cache()->set_enable_prefix_caching(true);
  LLMSERVE_ASSIGN_OR_RETURN(TimedEngine on, BuildTimedEngine(config, 0));
  config.mutable_cache()->set_enable_prefix_caching(false);
  LLMSERVE_ASSIGN_OR_RETURN(TimedEngine off, BuildTimedEngine(config, 1));

  proto::SamplingParams sampling = deploy::BenchmarkSampling();
  sampling.temperature = FLAGS_temperature;

  nlohmann::json json = {
      {"model_dir", FLAGS_model.empty() ? "preset " + FLAGS_preset : FLAGS_model},
      {"block_size", on.built.block_size},
  };
  LLMSERVE_RETURN_IF_ERROR(MeasureThroughput(on, off, sampling, model_dir, &json));
  LLMSERVE_RETURN_IF_ERROR(MeasureTtft(on, sampling, &json));
  if (!FLAGS_output_json.empty()) {
    std::ofstream out(FLAGS_output_json);
    if (!out || !(out << json.dump(2) << "\n"))
      return Status::InvalidArgument("cannot write --output-json file '" + FLAGS_output_json + "'");
  }
  on.built.core->Shutdown();
  off.built.core->Shutdown();
  return Status::Ok();
}

}  // namespace
}  // namespace llmserve

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up as they come, also in a log
  llmserve::common::InitProcess(&argc, &argv,
      "prefix_cache_bench [--preset tiny|qwen3-0.6b | --model DIR] [options] [engine flags]\n"
      "Prefix caching end to end: throughput on vs off at a 0 % hit rate (interleaved pairs), and\n"
      "TTFT with a shared prefix vs none.");
  if (argc != 1) {
    LOG(ERROR) << "unexpected argument '" << argv[1] << "'";
    return 2;
  }
  llmserve::Status s = llmserve::Main();
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  return 0;
}
