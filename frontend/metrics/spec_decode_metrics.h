#pragma once
// vLLM's speculative decoding counters (vllm/v1/spec_decode/metrics.py), fed
// from the engines' SchedulerStats.spec_decoding_stats:
// vllm:spec_decode_num_drafts_total, _num_draft_tokens_total,
// _num_accepted_tokens_total (labels model_name, engine) and
// _num_accepted_tokens_per_pos_total (plus position). FrontendMetrics
// registers them with the first report of an engine that speculates.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "frontend/metrics/family.h"
#include "frontend/metrics/registry.h"
#include "proto/engine_core_output.h"

namespace llmserve::frontend::metrics {

// One engine's counts since start (the counters' values), for the stats log.
struct SpecDecodeTotals {
  int32_t num_spec_tokens = 0;  // drafts per step at most, as the engine last reported
  double drafts = 0, draft_tokens = 0, accepted_tokens = 0;
  std::vector<double> accepted_per_pos;  // one per draft position
};

class SpecDecodeMetrics {
 public:
  // Registers the four families in `registry` (which outlives this).
  SpecDecodeMetrics(Registry& registry, std::string model_name);

  // Adds one report's counts for `engine`.
  void Record(uint32_t engine, const proto::SpecDecodingStats& stats);

  // The families' exposed names (with "_total").
  std::vector<std::string> ExposedNames() const;

  // `engine`'s totals; none before its first report.
  std::optional<SpecDecodeTotals> Totals(uint32_t engine) const;

 private:
  // One engine's series, kept so Totals() reads them without creating any.
  struct EngineSeries {
    int32_t num_spec_tokens = 0;
    Counter* drafts = nullptr;
    Counter* draft_tokens = nullptr;
    Counter* accepted = nullptr;
    std::vector<Counter*> accepted_per_pos;
  };
  EngineSeries& ForEngine(uint32_t engine, size_t positions);  // needs mu_

  std::string model_name_;
  Family<Counter>* drafts_;
  Family<Counter>* draft_tokens_;
  Family<Counter>* accepted_;
  Family<Counter>* accepted_per_pos_;
  mutable std::mutex mu_;
  std::map<uint32_t, EngineSeries> engines_;  // guarded by mu_
};

}  // namespace llmserve::frontend::metrics
