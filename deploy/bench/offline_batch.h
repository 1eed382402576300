#pragma once
// Runs a batch of token-id prompts to completion on an in-process EngineCore,
// all submitted at once, and times what a user of the offline API sees: the
// wall time of the whole batch (AddRequest included, which validates the
// request and computes its prompt's block hashes when prefix caching is on),
// each request's time to first token and latency, and the steps split into
// those that computed prompt tokens and decode-only steps.
//
// Step accounting: a step's scheduled token count comes from the scheduler
// stats; its decode tokens are the tokens it produced for requests that had
// already produced one; the rest are prompt tokens (or recomputed tokens of a
// preempted request). A step with any such tokens is a prefill step (its time
// and prompt tokens count towards prefill throughput; its decode tokens are
// counted nowhere), every other step is a decode step.

#include <cstdint>
#include <functional>
#include <vector>

#include "engine_core/engine_core.h"
#include "proto/sampling_params.h"
#include "base/status_or.h"

namespace llmserve::deploy {

// One prompt of a batch.
struct OfflineRequest {
  std::vector<int32_t> prompt_token_ids;  // must be non-empty
  int32_t max_tokens = 16;                // output tokens (exactly, with ignore_eos)
};

// What one request saw, in seconds from the start of the batch.
struct OfflineRequestTiming {
  double ttft_s = 0;          // until its first output token
  double latency_s = 0;       // until its last output token
  int32_t prompt_tokens = 0;  // prompt length
  int32_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  int32_t output_tokens = 0;  // tokens generated
};

// The batch as a whole.
struct OfflineBatchResult {
  double elapsed_s = 0;         // first AddRequest until the last request finished
  double add_requests_s = 0;    // time spent inside AddRequest (part of elapsed_s)
  int64_t prompt_tokens = 0;    // sum of prompt lengths
  int64_t output_tokens = 0;    // tokens generated
  int64_t cached_tokens = 0;    // prompt tokens served from the prefix cache
  int64_t prefill_tokens = 0;   // non-decode tokens computed in prefill steps
  double prefill_time_s = 0;    // wall time of prefill steps
  int64_t decode_tokens = 0;    // tokens generated in decode-only steps
  double decode_time_s = 0;     // wall time of decode-only steps
  int64_t num_steps = 0;        // engine steps taken
  int64_t num_preemptions = 0;  // requests preempted (and recomputed)
  std::vector<OfflineRequestTiming> requests;  // in input order

  // Tokens per second of prefill and decode steps (0 when there were none).
  double prefill_tokens_per_second() const { return prefill_time_s > 0 ? prefill_tokens / prefill_time_s : 0; }
  double decode_tokens_per_second() const { return decode_time_s > 0 ? decode_tokens / decode_time_s : 0; }
};

// Submits every request (sampling params from `sampling`, max_tokens from the
// request) and steps `core` until all have finished; `progress(done, total)`
// is called as requests finish. The core must have no other requests: a
// request that does not finish normally (abort, error) is an error.
StatusOr<OfflineBatchResult> RunOfflineBatch(engine_core::EngineCore& core, const std::vector<OfflineRequest>& requests,
                                             const proto::SamplingParams& sampling,
                                             const std::function<void(size_t, size_t)>& progress = {});

// The sampling vLLM's offline benchmarks use: temperature 1, top_p 1,
// ignore_eos (every request produces exactly max_tokens tokens).
proto::SamplingParams BenchmarkSampling();

// A progress callback drawing a bar labelled `label` on stderr when it is a
// terminal, and nothing otherwise.
std::function<void(size_t, size_t)> TerminalProgress(const char* label);

}  // namespace llmserve::deploy
