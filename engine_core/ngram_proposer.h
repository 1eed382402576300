#pragma once
// The n-gram proposer of speculative decoding (vLLM's NgramProposer, "prompt
// lookup"): the drafts for a request are the tokens that followed an earlier
// occurrence of the end of its token sequence.

#include <cstdint>
#include <span>
#include <vector>

namespace llmserve::engine_core {

// Which suffix lengths the proposer tries (vLLM's defaults).
struct NgramConfig {
  int32_t min_n = 5;  // shortest suffix that may match (prompt_lookup_min)
  int32_t max_n = 5;  // longest suffix tried (prompt_lookup_max)
};

// Replaces `*drafts` with the proposal for `tokens` (prompt + output so far):
// for the longest n in [min_n, max_n] whose last n tokens occur earlier in
// `tokens` (an occurrence may overlap the suffix but not be it), the earliest
// such occurrence's following tokens, at most `max_drafts` of them and never
// past the end of `tokens`. Empty when nothing matches.
void ProposeNgram(std::span<const int32_t> tokens, const NgramConfig& config, int32_t max_drafts,
                  std::vector<int32_t>* drafts);

}  // namespace llmserve::engine_core
