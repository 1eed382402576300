#pragma once
// vLLM's serving-benchmark metrics from per-request timings.
//
//   TTFT  time from sending a request to its first streamed token chunk
//   ITL   the gaps between consecutive token chunks (all requests pooled)
//   TPOT  per request: (E2E - TTFT) / (output_tokens - 1), for output_tokens > 1
//   E2E   time from sending a request to its last token chunk
//   goodput  completed requests per second that meet every SLO given
//            (a request with <= 1 output token counts as TPOT 0 here)
// Percentiles interpolate linearly between order statistics (numpy's default);
// std is the population standard deviation. Empty sets give 0 everywhere.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status_or.h"
#include "deploy/bench/spec_decode_stats.h"

namespace llmserve::deploy::bench {

// What one benchmark request measured. Times are in seconds.
struct RequestOutput {
  bool success = false;         // got HTTP 200 and at least one token chunk
  std::string error;            // why not, when !success
  int64_t prompt_len = 0;       // prompt tokens: the server's usage when reported, else the dataset's count
  int64_t output_tokens = 0;    // generated tokens: usage when reported, else counted with the tokenizer
  bool usage_reported = false;  // whether the server sent a usage block with completion_tokens
  double ttft = 0;              // send -> first token chunk
  std::vector<double> itl;      // gaps between token chunks
  double latency = 0;           // send -> last token chunk (E2E)
  double start_time = 0;        // when it was sent, seconds after the benchmark started
  double queue_time = 0;        // waiting in the client for a concurrency slot before sending
  std::string generated_text;   // concatenated streamed text
  std::string finish_reason;    // the last finish_reason the stream gave ("stop", "length"...), "" if none
};

// Service-level objectives for goodput, in milliseconds (vLLM's --goodput).
struct GoodputSlo {
  std::optional<double> ttft_ms;  // per-request TTFT bound
  std::optional<double> tpot_ms;  // per-request TPOT bound
  std::optional<double> e2el_ms;  // per-request E2E bound
  // True when any bound is set.
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

// Parses "ttft:500" "tpot:50" "e2el:2000" pairs; names other than ttft, tpot
// and e2el, malformed pairs and negative values are errors.
StatusOr<GoodputSlo> ParseGoodput(const std::vector<std::string>& pairs);

// Mean, median, std and chosen percentiles of one metric, in milliseconds.
struct MetricStats {
  double mean_ms = 0;                                // arithmetic mean
  double median_ms = 0;                              // 50th percentile
  double std_ms = 0;                                 // population standard deviation
  std::vector<std::pair<double, double>> percentiles_ms;  // (percentile, value)
};

// The benchmark's summary, with vLLM's meanings.
struct BenchmarkMetrics {
  int64_t completed = 0;              // successful requests
  int64_t failed = 0;                 // failed requests
  int64_t total_input = 0;            // prompt tokens of successful requests
  int64_t total_output = 0;           // output tokens of successful requests
  double request_throughput = 0;      // completed / duration
  double request_goodput = 0;         // requests meeting the SLOs / duration
  double output_throughput = 0;       // total_output / duration
  double total_token_throughput = 0;  // (total_input + total_output) / duration
  MetricStats ttft, tpot, itl, e2el;  // per-metric statistics
  double max_output_tokens_per_s = 0;   // busiest one-second bucket of token arrivals
  int64_t max_concurrent_requests = 0;  // peak number of requests in flight
  std::vector<int64_t> output_lens;     // per request; 0 for failed ones
  int64_t structured_requests = 0;      // requests that carried a --structured-output constraint
  int64_t structured_valid = 0;         // of those, answers that satisfied it
  std::optional<SpecDecodeSummary> spec_decode;  // from the server's /metrics, when it speculated during the run
};

// Linear-interpolation percentile (p in [0, 100]) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);
// Statistics of `seconds`, reported in milliseconds.
MetricStats Summarize(const std::vector<double>& seconds, const std::vector<double>& percentiles);
// TPOT of one request in seconds, 0 when it has at most one output token.
double RequestTpot(const RequestOutput& o);
// Computes every metric over `outputs` for a run that took `duration_s`.
BenchmarkMetrics ComputeMetrics(const std::vector<RequestOutput>& outputs, double duration_s,
                                const std::vector<double>& percentiles, const GoodputSlo& slo);

}  // namespace llmserve::deploy::bench
