#pragma once
// Scheduler knobs (vLLM's SchedulerConfig names; flags map onto these fields).

#include <cstdint>
#include <string_view>

#include "base/status_or.h"
#include "engine_core/ngram_proposer.h"
#include "engine_core/suffix_proposer.h"

namespace llmserve::engine_core {

// Which waiting request goes first, and which running request is preempted.
enum class SchedulingPolicy : uint8_t {
  kFcfs,      // arrival order; preempt the most recently admitted running request
  kPriority,  // lowest (priority, arrival_time) first; preempt the max of those
};

// Parses "fcfs" or "priority" (`--scheduling-policy`).
StatusOr<SchedulingPolicy> ParseSchedulingPolicy(std::string_view name);

struct SchedulerConfig {
  int32_t max_num_batched_tokens = 2048;  // token budget of one step
  int32_t max_num_seqs = 256;             // running requests at most
  int32_t max_model_len = 2048;           // prompt + output tokens at most
  int32_t long_prefill_token_threshold = 0;  // >0: prefill chunks at most this long
  bool enable_chunked_prefill = true;     // split prompts across steps
  bool pooling_runner = false;            // --runner pooling: every request pools its prompt, none generates
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  int32_t max_waiting_requests = 0;       // >0: AddRequest beyond this is ResourceExhausted
  // >0: distinct LoRA adapters among running requests at most (--max-loras);
  // a waiting request of a further adapter waits, later ones may pass it.
  int32_t max_loras = 0;
  bool reserve_full_prompt = true;        // admit only when the whole prompt's blocks fit
  int32_t num_lookahead_tokens = 0;       // extra KV slots per step (speculative decoding)
  bool log_stats = true;                  // record request events and attach SchedulerStats
  // Speculative decoding: on when num_speculative_tokens > 0, with the
  // n-gram proposer or, when `suffix_decoding`, the suffix decoding one.
  int32_t num_speculative_tokens = 0;     // drafts per decode step at most (0: off)
  NgramConfig ngram;                      // the n-gram proposer's suffix lengths
  bool suffix_decoding = false;           // vLLM's method "suffix" instead of "ngram"
  SuffixDecodingConfig suffix;            // its knobs
  // >0: no drafts are proposed while at least this many requests run
  // (vLLM's disable_by_batch_size).
  int32_t spec_disable_by_batch_size = 0;

  // InvalidArgument naming the first bad field, or Ok.
  Status Validate() const;
};

}  // namespace llmserve::engine_core
