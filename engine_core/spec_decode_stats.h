#pragma once
// Speculative decoding counters (vLLM's SpecDecodingStats): how many draft
// runs were verified, how many draft tokens they held and how many of those
// the workers accepted, in total and per draft position.

#include <cstdint>
#include <vector>

namespace llmserve::engine_core {

struct SpecDecodingStats {
  int64_t num_drafts = 0;           // verified draft runs (one per request and step)
  int64_t num_draft_tokens = 0;     // draft tokens verified
  int64_t num_accepted_tokens = 0;  // of those, accepted
  std::vector<int64_t> num_accepted_tokens_per_pos;  // [i]: runs whose draft i was accepted

  // Counts one run of `drafts` drafts of which the first `accepted` were accepted.
  void Record(int32_t drafts, int32_t accepted) {
    ++num_drafts;
    num_draft_tokens += drafts;
    num_accepted_tokens += accepted;
    if (num_accepted_tokens_per_pos.size() < static_cast<size_t>(accepted)) {
      num_accepted_tokens_per_pos.resize(static_cast<size_t>(accepted), 0);
    }
    for (int32_t i = 0; i < accepted; ++i) ++num_accepted_tokens_per_pos[static_cast<size_t>(i)];
  }
};

}  // namespace llmserve::engine_core
