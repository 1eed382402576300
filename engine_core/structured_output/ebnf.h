#pragma once
// The EBNF / GBNF front end: grammars in the form llama.cpp and vLLM's
// `grammar` field (xgrammar) accept:
//
//   root   ::= object            # comments run to the end of the line
//   object ::= "{" ws ( pair ( "," ws pair )* )? "}"
//   digit  ::= [0-9] | [^\x00-\x7F]
//
// Strings "..." and character classes [...] with escapes \n \r \t \\ \"
// \' \[ \] \- \xHH \uHHHH \UHHHHHHHH; `.` for any character; grouping;
// alternation; postfix ?, *, +, {m}, {m,}, {m,n}. A rule may continue on
// the next line; a line starting with `name ::=` starts a new rule.
// Errors carry "line:column".

#include <memory>
#include <string_view>

#include "base/status_or.h"
#include "engine_core/structured_output/grammar.h"

namespace llmserve::engine_core::structured_output {

// Compiles `text`; the start rule is `root_rule`.
StatusOr<std::shared_ptr<const Grammar>> CompileEbnf(std::string_view text,
                                                     std::string_view root_rule = "root");

}  // namespace llmserve::engine_core::structured_output
