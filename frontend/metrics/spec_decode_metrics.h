#pragma once
// vLLM's speculative decoding counters (vllm/v1/spec_decode/metrics.py), fed
// from the engines' SchedulerStats.spec_decoding_stats:
// vllm:spec_decode_num_drafts_total, _num_draft_tokens_total,
// _num_accepted_tokens_total (labels model_name, engine) and
// _num_accepted_tokens_per_pos_total (plus position). FrontendMetrics
// registers them with the first report of an engine that speculates.

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/metrics/family.h"
#include "frontend/metrics/registry.h"
#include "proto/engine_core_output.h"

namespace llmserve::frontend::metrics {

class SpecDecodeMetrics {
 public:
  // Registers the four families in `registry` (which outlives this).
  SpecDecodeMetrics(Registry& registry, std::string model_name);

  // Adds one report's counts for `engine`.
  void Record(uint32_t engine, const proto::SpecDecodingStats& stats);

  // The families' exposed names (with "_total").
  std::vector<std::string> ExposedNames() const;

 private:
  std::string model_name_;
  Family<Counter>* drafts_;
  Family<Counter>* draft_tokens_;
  Family<Counter>* accepted_;
  Family<Counter>* accepted_per_pos_;
};

}  // namespace llmserve::frontend::metrics
