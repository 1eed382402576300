#pragma once
// --speculative-config: vLLM's SpeculativeConfig JSON, checked and turned
// into the engine's proto. llmserve implements the n-gram and suffix
// decoding proposers; every other method is a startup error that says so.

#include <string>

#include "proto/engine_config.pb.h"
#include "base/status.h"

namespace llmserve::deploy {

// Parses `json` into `*out` with vLLM's rules: `method` "ngram" (or `model`
// "ngram" without a method), `num_speculative_tokens` >= 1 (required),
// `prompt_lookup_min` / `prompt_lookup_max` >= 1 with min <= max (both unset:
// 5 and 5; one unset: the other's value); or `method` "suffix" with the
// suffix_decoding_* keys (max_tree_depth >= 1, default 24; max_cached_requests
// >= 0, 10000; max_spec_factor >= 0, 1.0; min_token_prob in [0, 1], 0.1) and
// num_speculative_tokens defaulting to the tree depth. Either method takes
// `disable_by_batch_size` > 1 (no drafts while that many requests run).
// Empty `json`: speculative decoding off. An error names the key or method at
// fault and what is supported.
Status ParseSpeculativeConfig(const std::string& json, proto::SpeculativeConfig* out);

}  // namespace llmserve::deploy
