#pragma once
// Template: a Jinja template parsed once and rendered many times, possibly
// from several threads at once (the parsed tree is immutable; each render has
// its own scopes and output).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status_or.h"
#include "jinja/ast.h"
#include "jinja/interpreter.h"
#include "jinja/value.h"

namespace llmserve::jinja {

class Template {
 public:
  // Parses `source`. A syntax error, an unknown tag, filter or test is an
  // InvalidArgument status naming the line and column.
  static StatusOr<std::shared_ptr<const Template>> Parse(const std::string& source);

  // Renders with `vars` as the template's variables. Template errors
  // (undefined attribute use, type errors, raise_exception) are an
  // InvalidArgument status naming the line and column.
  StatusOr<std::string> Render(std::vector<std::pair<std::string, Value>> vars, const RenderEnv& env) const;

 private:
  StmtList body_;
};

}  // namespace llmserve::jinja
