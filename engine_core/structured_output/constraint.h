#pragma once
// The bridge from a request's StructuredOutputsParams to a Grammar: picks the
// front end (JSON Schema, json_object, regex, choice, EBNF) and its options.
// The frontend calls it to reject a bad constraint with a 400 before the
// request reaches an engine; the engine calls it again to compile.

#include <memory>

#include "base/status_or.h"
#include "engine_core/structured_output/grammar.h"
#include "proto/structured_outputs_params.h"

namespace llmserve::engine_core::structured_output {

// The grammar of `params`. Errors: not exactly one constraint, an option this
// engine cannot honour (whitespace_pattern), or the front end's own error
// (which names the keyword, the JSON pointer, the offset or line:column).
StatusOr<std::shared_ptr<const Grammar>> GrammarForConstraint(const proto::StructuredOutputsParams& params);

}  // namespace llmserve::engine_core::structured_output
