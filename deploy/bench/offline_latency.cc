#include "deploy/bench/offline_latency.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "common/flags.h"
#include "deploy/bench/offline_batch.h"
#include "deploy/bench/offline_dataset.h"
#include "deploy/bench/offline_options.h"
#include "deploy/engine_flags.h"
#include "engine_core/engine_factory.h"
#include "worker/model_config.h"

DECLARE_int64(seed);

namespace llmserve::deploy {

namespace {

OfflineOptions LatencyOptions() {
  return OfflineOptions({
      {"model", "", "Model directory (or give it as the positional MODEL_DIR)."},
      {"input-len", "32", "Prompt tokens per request (random token ids)."},
      {"output-len", "128", "Output tokens per request (EOS ignored)."},
      {"batch-size", "8", "Requests per batch, submitted together."},
      {"num-iters-warmup", "10", "Batches run before measuring."},
      {"num-iters", "30", "Batches measured."},
      {"output-json", "", "Write the results as JSON to this file."},
  });
}

constexpr int kPercentages[] = {10, 25, 50, 75, 90, 99};

// The benchmark's own options, validated.
struct LatencyParams {
  int64_t input_len = 0;
  int64_t output_len = 0;
  int64_t batch_size = 0;
  int64_t warmup = 0;
  int64_t iters = 0;
};

StatusOr<LatencyParams> ParseLatencyParams(const OfflineOptions& options) {
  auto input_len = options.Int("input-len", 1);
  auto output_len = options.Int("output-len", 1);
  auto batch_size = options.Int("batch-size", 1);
  auto warmup = options.Int("num-iters-warmup", 0);
  auto iters = options.Int("num-iters", 1);
  for (const auto* v : {&input_len, &output_len, &batch_size, &warmup, &iters})
    if (!v->ok()) return v->status();
  return LatencyParams{*input_len, *output_len, *batch_size, *warmup, *iters};
}

// What the measured batches add up to.
struct LatencyTotals {
  std::vector<double> latencies;
  int64_t prefill_tokens = 0, decode_tokens = 0, preemptions = 0;
  double prefill_time = 0, decode_time = 0;
};

// Runs the warm-up batches, then the measured ones into *totals.
Status RunLatencyBatches(engine_core::EngineCore& core, const std::vector<OfflineRequest>& batch,
                         const LatencyParams& params, LatencyTotals* totals) {
  const proto::SamplingParams sampling = BenchmarkSampling();
  std::printf("Warming up...\n");
  auto warm_progress = TerminalProgress("Warmup iterations");
  for (int64_t i = 0; i < params.warmup; ++i) {
    auto r = RunOfflineBatch(core, batch, sampling);
    if (!r.ok()) return r.status();
    if (warm_progress) warm_progress(static_cast<size_t>(i + 1), static_cast<size_t>(params.warmup));
  }
  auto progress = TerminalProgress("Bench iterations");
  for (int64_t i = 0; i < params.iters; ++i) {
    auto r = RunOfflineBatch(core, batch, sampling);
    if (!r.ok()) return r.status();
    totals->latencies.push_back(r->elapsed_s);
    totals->prefill_tokens += r->prefill_tokens;
    totals->prefill_time += r->prefill_time_s;
    totals->decode_tokens += r->decode_tokens;
    totals->decode_time += r->decode_time_s;
    totals->preemptions += r->num_preemptions;
    if (progress) progress(static_cast<size_t>(i + 1), static_cast<size_t>(params.iters));
  }
  return Status::Ok();
}

// Prints the results and, when json_path is set, writes them there as JSON.
Status ReportLatency(const LatencyTotals& t, const LatencyParams& params, const std::string& json_path) {
  const std::vector<double>& latencies = t.latencies;
  double mean = 0;
  for (double l : latencies) mean += l;
  mean /= static_cast<double>(latencies.size());
  double var = 0;
  for (double l : latencies) var += (l - mean) * (l - mean);
  const double stddev = std::sqrt(var / static_cast<double>(latencies.size()));
  const double prefill_tps = t.prefill_time > 0 ? t.prefill_tokens / t.prefill_time : 0;
  const double decode_tps = t.decode_time > 0 ? t.decode_tokens / t.decode_time : 0;
  std::printf("Avg latency: %.6f seconds\n", mean);
  std::printf("Std latency: %.6f seconds\n", stddev);
  nlohmann::json percentiles = nlohmann::json::object();
  for (int p : kPercentages) {
    const double v = Percentile(latencies, p);
    std::printf("%d%% percentile latency: %.6f seconds\n", p, v);
    percentiles[std::to_string(p)] = v;
  }
  std::printf("Prefill: %lld tokens in %.4f s of prefill steps (%.1f tokens/s)\n",
              static_cast<long long>(t.prefill_tokens), t.prefill_time, prefill_tps);
  std::printf("Decode: %lld tokens in %.4f s of decode-only steps (%.1f tokens/s)\n",
              static_cast<long long>(t.decode_tokens), t.decode_time, decode_tps);
  if (t.preemptions > 0) std::printf("Preemptions: %lld (the KV cache is too small for the batch)\n", static_cast<long long>(t.preemptions));

  if (json_path.empty()) return Status::Ok();
  nlohmann::json j = {
      {"avg_latency", mean},
      {"std_latency", stddev},
      {"latencies", latencies},
      {"percentiles", percentiles},
      {"prefill_tokens", t.prefill_tokens},
      {"prefill_time", t.prefill_time},
      {"prefill_tokens_per_second", prefill_tps},
      {"decode_tokens", t.decode_tokens},
      {"decode_time", t.decode_time},
      {"decode_tokens_per_second", decode_tps},
      {"num_preemptions", t.preemptions},
      {"batch_size", params.batch_size},
      {"input_len", params.input_len},
      {"output_len", params.output_len},
      {"num_iters", params.iters},
      {"num_iters_warmup", params.warmup},
  };
  std::ofstream out(json_path);
  if (!out || !(out << j.dump(4) << "\n")) return Status::InvalidArgument("cannot write --output-json file '" + json_path + "'");
  return Status::Ok();
}

}  // namespace

int RunBenchLatency(int argc, char** argv) {
  OfflineOptions options = LatencyOptions();
  if (Status s = options.Extract(&argc, argv); !s.ok()) return ReportFailure(s, 2);
  // As in vLLM: the same prompts run again and again, so caching would skew it.
  gflags::SetCommandLineOptionWithMode("enable_prefix_caching", "false", gflags::SET_FLAGS_DEFAULT);
  common::InitProcess(&argc, &argv,
      "llmserve bench latency --model DIR [--input-len N] [--output-len M] [--batch-size B]\n"
      "    [--num-iters-warmup W] [--num-iters I] [--output-json FILE] [engine flags]\n"
      "Measures the latency of one batch of B random prompts run to completion in this process\n"
      "(no HTTP), I times after W warm-up batches; reports the average, standard deviation and\n"
      "percentiles, and prefill / decode tokens per second measured on prefill and decode-only steps.\n\n"
      "Benchmark options:\n" + options.Usage());
  auto model_dir = ModelDirFromArgs(options, argc, argv);
  if (!model_dir.ok()) return ReportFailure(model_dir.status(), 2);
  auto params = ParseLatencyParams(options);
  if (!params.ok()) return ReportFailure(params.status(), 2);

  proto::EngineConfig config;
  if (Status s = EngineConfigFromFlags(*model_dir, &config); !s.ok()) return ReportFailure(s, 2);
  auto model_config = worker::LoadModelConfig(*model_dir);
  if (!model_config.ok()) return ReportFailure(model_config.status(), 1);
  const int64_t max_model_len = config.model().max_model_len() ? config.model().max_model_len()
                                                               : static_cast<int64_t>(model_config->max_position_embeddings);
  const int64_t total_len = params->input_len + params->output_len;
  if (max_model_len < total_len)
    return ReportFailure(Status::InvalidArgument("--input-len + --output-len (" + std::to_string(total_len) +
                                        ") exceed max_model_len " + std::to_string(max_model_len)),
                2);
  auto engine = engine_core::BuildEngineCore(config, 0);
  if (!engine.ok()) return ReportFailure(engine.status(), 1);

  std::mt19937_64 rng(static_cast<uint64_t>(FLAGS_seed));
  std::vector<OfflineRequest> batch(static_cast<size_t>(params->batch_size));
  for (auto& r : batch) {
    r.prompt_token_ids = RandomTokenIds(rng, params->input_len, static_cast<int64_t>(model_config->vocab_size));
    r.max_tokens = static_cast<int32_t>(params->output_len);
  }
  LatencyTotals totals;
  if (Status s = RunLatencyBatches(*engine->core, batch, *params, &totals); !s.ok()) return ReportFailure(s, 1);
  if (Status s = ReportLatency(totals, *params, options.Get("output-json")); !s.ok()) return ReportFailure(s, 1);
  return 0;
}

}  // namespace llmserve::deploy
