#include "frontend/metrics/spec_decode_log.h"

#include <algorithm>
#include <cstdio>

namespace llmserve::frontend::metrics {

std::optional<std::string> SpecDecodeLogLine(const SpecDecodeTotals& before, const SpecDecodeTotals& now,
                                             double seconds) {
  const double drafts = now.drafts - before.drafts;
  if (drafts <= 0) return std::nullopt;
  const double drafted = now.draft_tokens - before.draft_tokens;
  const double accepted = now.accepted_tokens - before.accepted_tokens;
  const double span = seconds > 0 ? seconds : 0.0;
  // vLLM lists every position up to num_speculative_tokens, accepted or not.
  std::string per_pos;
  const size_t positions = std::max(now.accepted_per_pos.size(), static_cast<size_t>(std::max(now.num_spec_tokens, 0)));
  for (size_t i = 0; i < positions; ++i) {
    const double a = (i < now.accepted_per_pos.size() ? now.accepted_per_pos[i] : 0.0) -
                     (i < before.accepted_per_pos.size() ? before.accepted_per_pos[i] : 0.0);
    char rate[32];
    std::snprintf(rate, sizeof(rate), "%.3f", a / drafts);
    if (!per_pos.empty()) per_pos += ", ";
    per_pos += rate;
  }
  char avg[32] = "nan";
  if (drafted > 0) std::snprintf(avg, sizeof(avg), "%.1f", accepted / drafted * 100.0);
  char text[256];
  std::snprintf(text, sizeof(text),
                "SpecDecoding metrics: Mean acceptance length: %.2f, Accepted throughput: %.2f tokens/s, "
                "Drafted throughput: %.2f tokens/s, Accepted: %lld tokens, Drafted: %lld tokens, "
                "Per-position acceptance rate: ",
                1.0 + accepted / drafts, span > 0 ? accepted / span : 0.0, span > 0 ? drafted / span : 0.0,
                static_cast<long long>(accepted), static_cast<long long>(drafted));
  return std::string(text) + per_pos + ", Avg Draft acceptance rate: " + avg + "%";
}

}  // namespace llmserve::frontend::metrics
