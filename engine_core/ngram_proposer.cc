#include "engine_core/ngram_proposer.h"

#include <algorithm>

namespace llmserve::engine_core {

void ProposeNgram(std::span<const int32_t> tokens, const NgramConfig& config, int32_t max_drafts,
                  std::vector<int32_t>* drafts) {
  drafts->clear();
  const int32_t total = static_cast<int32_t>(tokens.size());
  const int32_t k = max_drafts;
  if (k <= 0) return;
  // A direct scan per length, longest first: n <= max_n is small, so this is
  // O(max_n * total * n) and the first hit of each length is the earliest.
  for (int32_t n = std::min(config.max_n, total - 1); n >= config.min_n; --n) {
    const int32_t suffix = total - n;
    for (int32_t start = 0; start < suffix; ++start) {
      if (!std::equal(tokens.begin() + start, tokens.begin() + start + n, tokens.begin() + suffix)) continue;
      const int32_t from = start + n;
      const int32_t count = std::min(k, total - from);
      drafts->assign(tokens.begin() + from, tokens.begin() + from + count);
      return;
    }
  }
}

}  // namespace llmserve::engine_core
