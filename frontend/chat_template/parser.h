#pragma once
// Parser: tokens -> statement tree, following jinja2's grammar and operator
// precedence (condexpr < or < and < not < comparisons < + - < ~ < * / // % <
// ** < unary, then postfix . [] () and filters/tests).

#include <vector>

#include "frontend/chat_template/ast.h"
#include "frontend/chat_template/lexer.h"

namespace llmserve::frontend::jinja {

// Parses a whole template. Throws TemplateError naming the position.
StmtList Parse(const std::vector<Token>& tokens);

}  // namespace llmserve::frontend::jinja
