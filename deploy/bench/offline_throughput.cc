#include "deploy/bench/offline_throughput.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

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

OfflineOptions ThroughputOptions() {
  return OfflineOptions({
      {"model", "", "Model directory (or give it as the positional MODEL_DIR)."},
      {"dataset-name", "sharegpt",
       "random, or the format of --dataset-path: sharegpt or custom (either is read by content: a ShareGPT "
       "JSON array, or JSON lines of prompts or conversations); without --dataset-path, random."},
      {"dataset-path", "", "ShareGPT JSON or JSON lines of prompts; empty = random prompts."},
      {"num-prompts", "1000", "Number of prompts to process."},
      {"input-len", "", "Random prompts: tokens per prompt (required without --dataset-path)."},
      {"output-len", "", "Output tokens per request; overrides the dataset's (random default 128)."},
      {"random-range-ratio", "0", "Random prompts: lengths vary uniformly by +- this fraction, in [0, 1)."},
      {"prefix-len", "0", "Random prompts: random tokens shared by every prompt, before the rest."},
      {"output-json", "", "Write the results as JSON to this file."},
  });
}

}  // namespace

int RunBenchThroughput(int argc, char** argv) {
  OfflineOptions options = ThroughputOptions();
  if (Status s = options.Extract(&argc, argv); !s.ok()) return ReportFailure(s, 2);
  common::InitProcess(&argc, &argv,
      "llmserve bench throughput --model DIR [--dataset-path FILE | --input-len N] [--output-len M]\n"
      "    [--num-prompts P] [--output-json FILE] [engine flags]\n"
      "Submits every prompt at once to an engine in this process (no HTTP) and runs until all are\n"
      "done; reports requests/s and tokens/s, and prefill / decode tokens/s measured separately.\n"
      "--seed also seeds the dataset sampling.\n\n"
      "Benchmark options:\n" + options.Usage());
  auto model_dir = ModelDirFromArgs(options, argc, argv);
  if (!model_dir.ok()) return ReportFailure(model_dir.status(), 2);

  OfflineDatasetOptions data;
  const std::string& dataset_name = options.Get("dataset-name");
  if (dataset_name != "random" && dataset_name != "sharegpt" && dataset_name != "custom")
    return ReportFailure(Status::InvalidArgument("--dataset-name must be random, sharegpt or custom, got '" + dataset_name + "'"), 2);
  if (dataset_name == "random" && options.Given("dataset-path"))
    LOG(WARNING) << "--dataset-path is ignored with --dataset-name random";
  if (dataset_name != "random") data.path = options.Get("dataset-path");
  data.model_dir = *model_dir;
  data.seed = static_cast<uint64_t>(FLAGS_seed);
  auto num_prompts = options.Int("num-prompts", 1);
  if (!num_prompts.ok()) return ReportFailure(num_prompts.status(), 2);
  data.num_prompts = *num_prompts;
  for (auto [name, field] : {std::pair{"input-len", &data.input_len}, std::pair{"output-len", &data.output_len}}) {
    if (options.Get(name).empty()) continue;
    auto v = options.Int(name, 1);
    if (!v.ok()) return ReportFailure(v.status(), 2);
    *field = *v;
  }
  if (!data.path.empty() && options.Given("input-len"))
    LOG(WARNING) << "--input-len is ignored with --dataset-path (the dataset's prompts are used)";
  auto ratio = options.Double("random-range-ratio", 0, 1);
  if (!ratio.ok()) return ReportFailure(ratio.status(), 2);
  data.range_ratio = *ratio;
  auto prefix = options.Int("prefix-len", 0);
  if (!prefix.ok()) return ReportFailure(prefix.status(), 2);
  data.prefix_len = *prefix;

  proto::EngineConfig config;
  if (Status s = EngineConfigFromFlags(*model_dir, &config); !s.ok()) return ReportFailure(s, 2);
  // Sample the prompts before loading the model, so bad input fails fast.
  auto model_config = worker::LoadModelConfig(*model_dir);
  if (!model_config.ok()) return ReportFailure(model_config.status(), 1);
  data.vocab_size = static_cast<int64_t>(model_config->vocab_size);
  data.max_model_len = config.model().max_model_len() ? config.model().max_model_len()
                                                      : static_cast<int64_t>(model_config->max_position_embeddings);
  auto requests = LoadOfflineDataset(data);
  if (!requests.ok()) return ReportFailure(requests.status(), 2);
  auto engine = engine_core::BuildEngineCore(config, 0);
  if (!engine.ok()) return ReportFailure(engine.status(), 1);

  auto r = RunOfflineBatch(*engine->core, *requests, BenchmarkSampling(), TerminalProgress("Processed prompts"));
  if (!r.ok()) return ReportFailure(r.status(), 1);

  const double n = static_cast<double>(requests->size());
  const int64_t total_tokens = r->prompt_tokens + r->output_tokens;
  std::printf("Throughput: %.2f requests/s, %.2f total tokens/s, %.2f output tokens/s\n", n / r->elapsed_s,
              total_tokens / r->elapsed_s, r->output_tokens / r->elapsed_s);
  std::printf("Total num prompt tokens:  %lld\n", static_cast<long long>(r->prompt_tokens));
  std::printf("Total num output tokens:  %lld\n", static_cast<long long>(r->output_tokens));
  std::printf("Prefill: %lld tokens in %.4f s of prefill steps (%.1f tokens/s); %lld prompt tokens from the prefix cache\n",
              static_cast<long long>(r->prefill_tokens), r->prefill_time_s, r->prefill_tokens_per_second(),
              static_cast<long long>(r->cached_tokens));
  std::printf("Decode: %lld tokens in %.4f s of decode-only steps (%.1f tokens/s)\n",
              static_cast<long long>(r->decode_tokens), r->decode_time_s, r->decode_tokens_per_second());
  if (r->num_preemptions > 0) std::printf("Preemptions: %lld\n", static_cast<long long>(r->num_preemptions));

  const std::string& json_path = options.Get("output-json");
  if (!json_path.empty()) {
    nlohmann::json j = {
        {"elapsed_time", r->elapsed_s},
        {"num_requests", requests->size()},
        {"total_num_tokens", total_tokens},
        {"requests_per_second", n / r->elapsed_s},
        {"tokens_per_second", total_tokens / r->elapsed_s},
        {"total_prompt_tokens", r->prompt_tokens},
        {"total_output_tokens", r->output_tokens},
        {"output_tokens_per_second", r->output_tokens / r->elapsed_s},
        {"cached_prompt_tokens", r->cached_tokens},
        {"prefill_tokens", r->prefill_tokens},
        {"prefill_time", r->prefill_time_s},
        {"prefill_tokens_per_second", r->prefill_tokens_per_second()},
        {"decode_tokens", r->decode_tokens},
        {"decode_time", r->decode_time_s},
        {"decode_tokens_per_second", r->decode_tokens_per_second()},
        {"num_steps", r->num_steps},
        {"num_preemptions", r->num_preemptions},
    };
    std::ofstream out(json_path);
    if (!out || !(out << j.dump(4) << "\n"))
      return ReportFailure(Status::InvalidArgument("cannot write --output-json file '" + json_path + "'"), 1);
  }
  return 0;
}

}  // namespace llmserve::deploy
