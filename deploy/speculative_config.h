#pragma once
// --speculative-config: vLLM's SpeculativeConfig JSON, checked and turned
// into the engine's proto. llmserve implements the n-gram proposer; every
// other method is a startup error that says so.

#include <string>

#include "proto/engine_config.pb.h"
#include "base/status.h"

namespace llmserve::deploy {

// Parses `json` into `*out` with vLLM's rules: `method` "ngram" (or `model`
// "ngram" without a method), `num_speculative_tokens` >= 1 (required),
// `prompt_lookup_min` / `prompt_lookup_max` >= 1 with min <= max (both unset:
// 5 and 5; one unset: the other's value), `disable_by_batch_size` > 1 when
// given (no drafts in a step with that many running requests). Empty `json`: speculative decoding
// off. An error names the key or method at fault and what is supported.
Status ParseSpeculativeConfig(const std::string& json, proto::SpeculativeConfig* out);

}  // namespace llmserve::deploy
