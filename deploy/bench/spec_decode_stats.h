#pragma once
// Speculative decoding figures for `llmserve bench serve`, as vLLM's bench
// computes them: the server's vllm:spec_decode_* counters are read from
// /metrics before and after the run, summed over every engine (and model),
// and the difference gives the run's acceptance rate, mean acceptance length
// and per-position acceptance. A server that does not speculate (no such
// counters, or no draft verified during the run) gives no figures.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmserve::deploy::bench {

struct Endpoint;

// The counters at one moment, summed over their series.
struct SpecDecodeCounters {
  double num_drafts = 0;           // vllm:spec_decode_num_drafts_total
  double num_draft_tokens = 0;     // vllm:spec_decode_num_draft_tokens_total
  double num_accepted_tokens = 0;  // vllm:spec_decode_num_accepted_tokens_total
  std::map<int, double> accepted_per_pos;  // vllm:spec_decode_num_accepted_tokens_per_pos_total by position
};

// What the run measured (vLLM's spec_decode_* result keys).
struct SpecDecodeSummary {
  int64_t num_drafts = 0;        // draft runs verified during the run
  int64_t draft_tokens = 0;      // draft tokens verified
  int64_t accepted_tokens = 0;   // of those, accepted
  double acceptance_rate = 0;    // accepted / drafted, in percent
  double acceptance_length = 0;  // 1 + accepted / drafts: tokens per verify step and request
  std::vector<double> per_position_acceptance_rates;  // [i]: share of draft runs whose draft i was accepted (0-1)
};

// The counters in a Prometheus text scrape; none when it has no spec decode counter.
std::optional<SpecDecodeCounters> ParseSpecDecodeCounters(const std::string& metrics_text);

// The counters the server at `endpoint` exposes now; none when /metrics
// cannot be read or has none.
std::optional<SpecDecodeCounters> FetchSpecDecodeCounters(const Endpoint& endpoint);

// The run's figures from the counters before and after it; none when `after`
// is missing or no draft token was verified in between. Missing `before`
// counts as zeros (a server may register the counters with its first draft).
std::optional<SpecDecodeSummary> SummarizeSpecDecode(const std::optional<SpecDecodeCounters>& before,
                                                     const std::optional<SpecDecodeCounters>& after);

}  // namespace llmserve::deploy::bench
