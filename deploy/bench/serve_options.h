#pragma once
// The settings of one `llmserve bench serve` run, read from vLLM's flag names.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "deploy/bench/bench_args.h"
#include "deploy/bench/datasets.h"
#include "deploy/bench/metrics.h"
#include "deploy/bench/stream_accumulator.h"
#include "deploy/bench/structured_output.h"

namespace llmserve::deploy::bench {

struct ServeBenchOptions {
  std::string backend = "openai";        // openai / vllm (completions) or openai-chat
  ApiKind api = ApiKind::kCompletions;   // derived from backend
  std::string base_url;                  // http://host:port[/prefix]
  std::string endpoint;                  // e.g. /v1/completions
  std::string model;                     // model id sent in requests ("" = first of /v1/models)
  std::string served_model_name;         // overrides `model` in the request body when set
  std::string tokenizer;                 // directory with tokenizer.json ("" = the model's, if a directory)
  std::string dataset_name = "random";   // random, sharegpt or prefix_repetition
  std::string dataset_path;              // for sharegpt
  size_t num_prompts = 1000;             // requests to send
  uint64_t seed = 0;                     // for datasets and arrivals
  RandomDatasetOptions random;           // --random-*
  PrefixRepetitionOptions prefix;        // --prefix-repetition-*
  std::optional<int64_t> sharegpt_output_len;  // --sharegpt-output-len
  double request_rate = 0;               // requests/s (+inf = all at once)
  double burstiness = 1;                 // gamma shape
  size_t max_concurrency = 0;            // 0 = unlimited
  bool ignore_eos = false;               // ask the server to ignore EOS
  bool ignore_eos_flag = false;          // --ignore-eos itself was given (constrained requests honour only that)
  std::vector<std::pair<std::string, std::string>> sampling;  // temperature etc. as JSON-number text
  std::string extra_body;                // JSON object merged into every request body
  StructuredOutputOptions structured;    // --structured-output*
  std::vector<std::string> percentile_metrics;  // of ttft, tpot, itl, e2el
  std::vector<double> metric_percentiles;       // e.g. {99}
  GoodputSlo goodput;                    // --goodput
  bool save_result = false;              // write the JSON file
  bool save_detailed = false;            // include per-request lists
  std::string result_filename;           // "" = vLLM's default name
  std::string result_dir;                // directory for the file
  std::string label;                     // result label ("" = backend)
  std::vector<std::pair<std::string, std::string>> metadata;  // KEY=VALUE copied into the JSON
  std::vector<std::pair<std::string, std::string>> headers;   // KEY=VALUE HTTP headers
  bool show_progress = true;             // a progress bar on a terminal (--disable-tqdm turns it off)
  double request_timeout_s = 600;        // per request
  double max_duration_s = 0;             // whole run, 0 = no limit
  bool quiet = false;                    // print no table (used by sweep)
  size_t num_warmups = 0;                // requests sent (and not measured) before the run
  double ready_check_timeout_s = 0;      // retry the first request until it succeeds, up to this long
  std::string request_id_prefix;         // x-request-id = prefix + index
  bool append_result = false;            // append the JSON as one more line instead of overwriting
};

// The flags `bench serve` accepts, with vLLM's names and defaults.
std::vector<ArgSpec> ServeBenchArgSpecs();
// Reads parsed flags into options; errors name the flag.
StatusOr<ServeBenchOptions> ServeBenchOptionsFromArgs(const ArgParser& args);

}  // namespace llmserve::deploy::bench
