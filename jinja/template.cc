#include "jinja/template.h"

#include <exception>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/lexer.h"
#include "jinja/parser.h"

namespace llmserve::jinja {
namespace {

// jinja2 checks filter and test names when it compiles; so do we.
void CheckNames(const Expr* e) {
  if (!e) return;
  if (e->kind == Expr::Kind::kFilter && !IsKnownFilter(e->name)) {
    throw TemplateError{"No filter named '" + e->name + "'.", e->line, e->column};
  }
  if (e->kind == Expr::Kind::kTest && !IsKnownTest(e->name)) {
    throw TemplateError{"No test named '" + e->name + "'.", e->line, e->column};
  }
  for (const auto& op : e->operands) CheckNames(op.get());
  for (const auto& k : e->dict_keys) CheckNames(k.get());
  for (const auto& kv : e->kwargs) CheckNames(kv.second.get());
}

void CheckNames(const StmtList& list) {
  for (const auto& s : list) {
    CheckNames(s->expr.get());
    CheckNames(s->filter.get());
    for (const auto& c : s->conditions) CheckNames(c.get());
    for (const auto& b : s->bodies) CheckNames(b);
    for (const auto& p : s->params) CheckNames(p.default_value.get());
    for (const auto& a : s->assignments) CheckNames(a.second.get());
  }
}

Status ToStatus(const TemplateError& e, const char* phase) {
  std::string where = e.line > 0 ? " at " + DescribePosition(e.line, e.column) : "";
  if (e.raised) return Status::InvalidArgument("chat template raised an exception" + where + ": " + e.message);
  return Status::InvalidArgument(std::string("chat template ") + phase + " error" + where + ": " + e.message);
}

}  // namespace

StatusOr<std::shared_ptr<const Template>> Template::Parse(const std::string& source) {
  try {
    auto t = std::shared_ptr<Template>(new Template());
    t->body_ = jinja::Parse(Tokenize(source));
    CheckNames(t->body_);
    return std::shared_ptr<const Template>(std::move(t));
  } catch (const TemplateError& e) {
    return ToStatus(e, "syntax");
  } catch (const std::exception& e) {
    return Status::Internal(std::string("chat template parse failed: ") + e.what());
  }
}

StatusOr<std::string> Template::Render(std::vector<std::pair<std::string, Value>> vars, const RenderEnv& env) const {
  try {
    auto globals = std::make_shared<Frame>();
    globals->vars = std::move(vars);
    Interpreter interp(std::move(globals), &env);
    return interp.Render(body_);
  } catch (const TemplateError& e) {
    return ToStatus(e, "render");
  } catch (const std::exception& e) {
    return Status::Internal(std::string("chat template render failed: ") + e.what());
  }
}

}  // namespace llmserve::jinja
