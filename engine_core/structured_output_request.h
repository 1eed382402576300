#pragma once
// A constrained request's grammar state (vLLM's StructuredOutputRequest):
// the compilation it waits for, then the matcher that follows its output.
// The matcher advances on every accepted output token after reasoning ends;
// preemption keeps it,
// since recomputation replays tokens the grammar has already accepted.

#include <memory>

#include "engine_core/structured_output/matcher.h"
#include "engine_core/structured_output_manager.h"

namespace llmserve::engine_core {

struct StructuredOutputRequest {
  GrammarFuture grammar;                                       // the compilation
  std::unique_ptr<structured_output::GrammarMatcher> matcher;  // set once compiled
  // False while the model is still reasoning: no mask, the matcher waits for
  // the end-of-reasoning token (vLLM's reasoning_ended).
  bool reasoning_ended = true;
  int32_t reasoning_end_id = -1;  // the token that ends reasoning
};

}  // namespace llmserve::engine_core
