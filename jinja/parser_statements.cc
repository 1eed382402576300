// The {% ... %} tags: if, for, set, macro, call, filter, with / generation,
// break / continue, print; and the tags chat templates may not use.

#include <set>
#include <string>

#include "jinja/parser_impl.h"

namespace llmserve::jinja {
namespace {

// Whether `name` is read anywhere in the expression / statements (jinja2 lets a
// macro take extra arguments only when its body reads varargs / kwargs).
bool Mentions(const Expr* e, const std::string& name) {
  if (!e) return false;
  if (e->kind == Expr::Kind::kName && e->name == name) return true;
  for (const auto& op : e->operands) {
    if (Mentions(op.get(), name)) return true;
  }
  for (const auto& k : e->dict_keys) {
    if (Mentions(k.get(), name)) return true;
  }
  for (const auto& kv : e->kwargs) {
    if (Mentions(kv.second.get(), name)) return true;
  }
  return false;
}

bool Mentions(const StmtList& list, const std::string& name) {
  for (const auto& s : list) {
    if (Mentions(s->expr.get(), name) || Mentions(s->filter.get(), name)) return true;
    for (const auto& c : s->conditions) {
      if (Mentions(c.get(), name)) return true;
    }
    for (const auto& b : s->bodies) {
      if (Mentions(b, name)) return true;
    }
    for (const auto& p : s->params) {
      if (Mentions(p.default_value.get(), name)) return true;
    }
    for (const auto& a : s->assignments) {
      if (Mentions(a.second.get(), name)) return true;
    }
  }
  return false;
}

}  // namespace

StmtPtr Parser::ParseStatement() {
  DepthGuard guard(this);
  const Token& tag = Cur();
  const std::string& name = tag.text;
  if (name == "if") return ParseIf();
  if (name == "for") return ParseFor();
  if (name == "set") return ParseSet();
  if (name == "macro") return ParseMacro();
  if (name == "call") return ParseCallBlock();
  if (name == "filter") return ParseFilterBlock();
  if (name == "with" || name == "generation") return ParseScope();
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) FailAt(tag, "'" + name + "' outside of a for loop");
    auto s = NewStmt(name == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, tag);
    Next();
    ExpectBlockEnd();
    return s;
  }
  if (name == "print") {
    auto s = NewStmt(Stmt::Kind::kOutput, tag);
    Next();
    // {% print a, b %} writes each expression in turn.
    s->expr = Make(Expr::Kind::kConcat, tag);
    while (Cur().type != T::kBlockEnd) {
      if (!s->expr->operands.empty()) ExpectOp(",");
      s->expr->operands.push_back(ParseExpression(true));
    }
    ExpectBlockEnd();
    return s;
  }
  static const std::set<std::string> kUnsupported = {"block", "extends", "include", "import", "from",
                                                     "autoescape", "do", "trans"};
  if (kUnsupported.count(name)) FailAt(tag, "unsupported tag '" + name + "' (not available to chat templates)");
  FailAt(tag, "Encountered unknown tag '" + name + "'");
}

StmtPtr Parser::ParseIf() {
  auto s = NewStmt(Stmt::Kind::kIf, Next());
  while (true) {
    s->conditions.push_back(ParseTuple(false, {}));
    s->bodies.push_back(ParseBody({"elif", "else", "endif"}));
    const Token& t = Next();
    if (t.text == "elif") continue;
    if (t.text == "else") {
      s->bodies.push_back(ParseBody({"endif"}));
      Next();
    }
    break;
  }
  ExpectBlockEnd();
  return s;
}

Target Parser::ParseTarget(bool with_namespace) {
  Target target;
  if (with_namespace && Cur().type == T::kName && Peek().type == T::kOperator && Peek().text == ".") {
    target.names.push_back(Next().text);
    Next();
    target.attribute = ExpectName().text;
    return target;
  }
  bool parens = SkipOp("(");
  while (true) {
    const Token& t = ExpectName();
    if (t.text == "true" || t.text == "false" || t.text == "none" || t.text == "True" ||
        t.text == "False" || t.text == "None") {
      FailAt(t, "can't assign to const");
    }
    target.names.push_back(t.text);
    if (!SkipOp(",")) break;
    target.is_tuple = true;
    if (Cur().type != T::kName) break;
  }
  if (parens) ExpectOp(")");
  return target;
}

StmtPtr Parser::ParseFor() {
  auto s = NewStmt(Stmt::Kind::kFor, Next());
  s->target = ParseTarget(false);
  if (!SkipName("in")) FailAt(Cur(), "expected 'in', got '" + Describe(Cur()) + "'");
  s->expr = ParseTuple(false, {"recursive"});
  if (SkipName("if")) s->filter = ParseExpression(true);
  if (IsName("recursive")) FailAt(Cur(), "unsupported: recursive for loops");
  ++loop_depth_;
  s->bodies.push_back(ParseBody({"endfor", "else"}));
  --loop_depth_;
  if (Next().text == "else") {
    s->bodies.push_back(ParseBody({"endfor"}));
    Next();
  }
  ExpectBlockEnd();
  return s;
}

StmtPtr Parser::ParseSet() {
  const Token& tag = Next();
  auto s = NewStmt(Stmt::Kind::kSet, tag);
  s->target = ParseTarget(true);
  if (SkipOp("=")) {
    s->expr = ParseTuple(true, {});
    ExpectBlockEnd();
    return s;
  }
  s->kind = Stmt::Kind::kSetBlock;
  if (IsOp("|")) s->filter = ParseFilters(nullptr);
  s->bodies.push_back(ParseBody({"endset"}));
  Next();
  ExpectBlockEnd();
  return s;
}

void Parser::ParseSignature(Stmt* s) {
  ExpectOp("(");
  while (!IsOp(")")) {
    if (!s->params.empty()) ExpectOp(",");
    if (IsOp(")")) break;
    MacroParam p;
    p.name = ExpectName().text;
    if (SkipOp("=")) {
      p.default_value = ParseExpression(true);
    } else if (!s->params.empty() && s->params.back().default_value) {
      FailAt(Cur(), "non-default argument follows default argument");
    }
    s->params.push_back(std::move(p));
  }
  ExpectOp(")");
}

StmtPtr Parser::ParseMacro() {
  auto s = NewStmt(Stmt::Kind::kMacro, Next());
  s->text = ExpectName().text;
  ParseSignature(s.get());
  int saved = loop_depth_;
  loop_depth_ = 0;
  s->bodies.push_back(ParseBody({"endmacro"}));
  loop_depth_ = saved;
  s->uses_varargs = Mentions(s->bodies[0], "varargs");
  s->uses_kwargs = Mentions(s->bodies[0], "kwargs");
  Next();
  ExpectBlockEnd();
  return s;
}

StmtPtr Parser::ParseCallBlock() {
  auto s = NewStmt(Stmt::Kind::kCallBlock, Next());
  if (IsOp("(")) ParseSignature(s.get());
  s->expr = ParseExpression(true);
  if (s->expr->kind != Expr::Kind::kCall) FailAt(Cur(), "expected call");
  s->bodies.push_back(ParseBody({"endcall"}));
  s->uses_varargs = Mentions(s->bodies[0], "varargs");
  s->uses_kwargs = Mentions(s->bodies[0], "kwargs");
  Next();
  ExpectBlockEnd();
  return s;
}

StmtPtr Parser::ParseFilterBlock() {
  auto s = NewStmt(Stmt::Kind::kFilterBlock, Next());
  s->filter = ParseFilterChain(nullptr, true);
  s->bodies.push_back(ParseBody({"endfilter"}));
  Next();
  ExpectBlockEnd();
  return s;
}

StmtPtr Parser::ParseScope() {
  const Token& tag = Next();
  std::string end = "end" + tag.text;
  auto s = NewStmt(Stmt::Kind::kScope, tag);
  if (tag.text == "with") {
    while (Cur().type != T::kBlockEnd) {
      if (!s->assignments.empty()) ExpectOp(",");
      Target t = ParseTarget(false);
      ExpectOp("=");
      s->assignments.emplace_back(std::move(t), ParseExpression(true));
    }
  }
  s->bodies.push_back(ParseBody({end}));
  Next();
  ExpectBlockEnd();
  return s;
}

}  // namespace llmserve::jinja
