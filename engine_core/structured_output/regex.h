#pragma once
// The regex front end: the Python / ECMAScript subset vLLM's `regex`
// constraint and JSON Schema's `pattern` use. Literals and escapes (\d \w \s
// \D \W \S \n \r \t \f \v \0 \xHH \uHHHH and escaped punctuation), `.`
// (any character but \n), classes [...] with ranges and negation, groups
// ( ), (?: ), (?P<name> ), (?<name> ), alternation, quantifiers ? * + {m}
// {m,} {m,n} (lazy forms accepted: same language), and ^ / $ at the ends.
// The whole output must match (anchored at both ends). Backreferences,
// lookaround and word boundaries are InvalidArgument naming the construct
// and its offset.

#include <memory>
#include <string_view>

#include "base/status_or.h"
#include "engine_core/structured_output/grammar.h"

namespace llmserve::engine_core::structured_output {

// The body of a string matching `pattern`. With `json_escaped`, the bytes
// are the pattern's matches as they appear inside a JSON string literal
// (quotes, backslashes and control characters escaped).
StatusOr<Expr> RegexToExpr(std::string_view pattern, bool json_escaped = false);

// A grammar accepting exactly the matches of `pattern`.
StatusOr<std::shared_ptr<const Grammar>> CompileRegex(std::string_view pattern);

}  // namespace llmserve::engine_core::structured_output
