#include "engine_core/scheduler_config.h"

#include <string>

namespace llmserve::engine_core {

StatusOr<SchedulingPolicy> ParseSchedulingPolicy(std::string_view name) {
  if (name == "fcfs") return SchedulingPolicy::kFcfs;
  if (name == "priority") return SchedulingPolicy::kPriority;
  return Status::InvalidArgument("unknown scheduling policy '" + std::string(name) +
                                 "' (expected fcfs or priority)");
}

Status SchedulerConfig::Validate() const {
  if (max_num_batched_tokens <= 0) return Status::InvalidArgument("max_num_batched_tokens must be > 0");
  if (max_num_seqs <= 0) return Status::InvalidArgument("max_num_seqs must be > 0");
  if (max_model_len < 2) return Status::InvalidArgument("max_model_len must be >= 2");
  if (long_prefill_token_threshold < 0)
    return Status::InvalidArgument("long_prefill_token_threshold must be >= 0");
  if (max_waiting_requests < 0) return Status::InvalidArgument("max_waiting_requests must be >= 0");
  if (num_lookahead_tokens < 0) return Status::InvalidArgument("num_lookahead_tokens must be >= 0");
  if (num_speculative_tokens < 0) return Status::InvalidArgument("num_speculative_tokens must be >= 0");
  if (spec_disable_by_batch_size < 0) return Status::InvalidArgument("spec_disable_by_batch_size must be >= 0");
  const bool prob_ok = suffix.min_token_prob >= 0 && suffix.min_token_prob <= 1;
  if (suffix_decoding &&
      (suffix.max_tree_depth < 1 || suffix.max_cached_requests < 0 || !(suffix.max_spec_factor >= 0) || !prob_ok))
    return Status::InvalidArgument("suffix decoding needs max_tree_depth >= 1, max_cached_requests >= 0, "
                                   "max_spec_factor >= 0 and min_token_prob in [0, 1]");
  if (num_speculative_tokens > 0 && !suffix_decoding && (ngram.min_n < 1 || ngram.max_n < ngram.min_n))
    return Status::InvalidArgument("the n-gram proposer needs 1 <= prompt_lookup_min <= prompt_lookup_max");
  if (!enable_chunked_prefill && max_num_batched_tokens < max_model_len - 1)
    return Status::InvalidArgument(
        "without chunked prefill, max_num_batched_tokens (" + std::to_string(max_num_batched_tokens) +
        ") must be at least max_model_len - 1 (" + std::to_string(max_model_len - 1) +
        ") so that every prompt fits in one step");
  return Status::Ok();
}

}  // namespace llmserve::engine_core
