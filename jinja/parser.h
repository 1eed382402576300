#pragma once
// Parse: tokens -> statement tree, following jinja2's grammar and operator
// precedence (condexpr < or < and < not < comparisons < + - < ~ < * / // % <
// ** < unary, then postfix . [] () and filters/tests).

#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace llmserve::jinja {

// Parses a whole template. Throws TemplateError naming the position.
StmtList Parse(const std::vector<Token>& tokens);

}  // namespace llmserve::jinja
