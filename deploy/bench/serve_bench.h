#pragma once
// `llmserve bench serve`: load an OpenAI-compatible server with a dataset's
// prompts at a request rate and report vLLM's serving metrics.

#include <string>

#include <nlohmann/json.hpp>

#include "deploy/bench/datasets.h"
#include "deploy/bench/metrics.h"
#include "deploy/bench/serve_options.h"
#include "deploy/bench/structured_output.h"

namespace llmserve::deploy::bench {

// One finished run.
struct ServeBenchResult {
  nlohmann::json json;       // vLLM's result layout (what --save-result writes)
  BenchmarkMetrics metrics;  // the same figures as numbers
  std::string saved_path;    // the JSON file written, "" when not saved
};

// The JSON body of one streamed request for `s` (chat or completions as
// options.api says), with `constraint` added when not null, then --extra-body.
std::string RequestBody(const ServeBenchOptions& options, const std::string& model, const SampleRequest& s,
                        const Constraint* constraint = nullptr);

// Samples the dataset, sends the requests, prints the table (unless
// options.quiet) and saves the JSON when asked. Errors are set-up problems
// (bad URL, no tokenizer, unreadable dataset); failed requests are counted.
StatusOr<ServeBenchResult> RunServeBenchmark(const ServeBenchOptions& options);

// The `llmserve bench serve` command: flags in, exit status out.
int RunBenchServeCommand(int argc, char** argv);

}  // namespace llmserve::deploy::bench
