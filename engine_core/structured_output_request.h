#pragma once
// A constrained request's grammar state (vLLM's StructuredOutputRequest):
// the compilation it waits for, then the matcher that follows its output.
// The matcher advances on every accepted output token; preemption keeps it,
// since recomputation replays tokens the grammar has already accepted.

#include <memory>

#include "engine_core/structured_output/matcher.h"
#include "engine_core/structured_output_manager.h"

namespace llmserve::engine_core {

struct StructuredOutputRequest {
  GrammarFuture grammar;                                       // the compilation
  std::unique_ptr<structured_output::GrammarMatcher> matcher;  // set once compiled
};

}  // namespace llmserve::engine_core
