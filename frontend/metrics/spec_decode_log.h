#pragma once
// The speculative decoding line vLLM's SpecDecodingLogging prints after the
// engine's stats line:
//   SpecDecoding metrics: Mean acceptance length: 2.40, Accepted throughput:
//   14.00 tokens/s, Drafted throughput: 30.00 tokens/s, Accepted: 140 tokens,
//   Drafted: 300 tokens, Per-position acceptance rate: 0.800, 0.400, 0.200,
//   Avg Draft acceptance rate: 46.7%
// Every figure is over the interval: mean acceptance length is 1 + accepted
// per verified draft run, the per-position rate is the share of runs whose
// draft at that position was accepted, the average rate is accepted over
// drafted tokens.

#include <optional>
#include <string>

#include "frontend/metrics/spec_decode_metrics.h"

namespace llmserve::frontend::metrics {

// The line for the interval between totals `before` and `now`, `seconds`
// long; none when no draft was verified in it (vLLM prints nothing then).
std::optional<std::string> SpecDecodeLogLine(const SpecDecodeTotals& before, const SpecDecodeTotals& now,
                                             double seconds);

}  // namespace llmserve::frontend::metrics
