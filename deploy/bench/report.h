#pragma once
// The results of a `bench serve` run: vLLM's result table on stdout and its
// JSON layout (same key names, so tools written for vLLM read ours).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/bench/metrics.h"
#include "deploy/bench/serve_options.h"

namespace llmserve::deploy::bench {

// What a run produced, besides the options.
struct RunFacts {
  std::string model_id;       // model named in the requests
  std::string tokenizer_id;   // directory the tokenizer came from
  std::string date;           // YYYYmmdd-HHMMSS, local time at the end of the run
  double duration_s = 0;      // the benchmark's duration
  std::string output_tokens_source;  // "usage", "tokenizer" or "usage+tokenizer"
};

// vLLM's result JSON: setup, traffic, totals, throughputs, and for each chosen
// metric mean_/median_/std_/pNN_<metric>_ms; with `options.save_detailed` also
// the per-request lists (input_lens, output_lens, ttfts, itls, latencies,
// start_times, queue_times, generated_texts, errors).
nlohmann::json ResultJson(const ServeBenchOptions& options, const RunFacts& facts,
                          const BenchmarkMetrics& metrics, const std::vector<RequestOutput>& outputs);

// The "Serving Benchmark Result" table, as vLLM prints it.
std::string ResultTable(const ServeBenchOptions& options, const RunFacts& facts, const BenchmarkMetrics& metrics);

// vLLM's default result file name: LABEL-RATEqps[-concurrencyN]-MODEL-DATE.json.
std::string DefaultResultFilename(const ServeBenchOptions& options, const RunFacts& facts);

// A float as Python prints it (vLLM's file names and messages): 10 -> "10.0", inf -> "inf".
std::string PyFloat(double v);

// A percentile as vLLM names it in keys: 99 -> "99", 99.9 -> "99.9".
std::string PercentileName(double p);

}  // namespace llmserve::deploy::bench
