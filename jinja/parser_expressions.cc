// jinja2's expression grammar, lowest precedence first: conditional
// expressions, or, and, not, comparisons, + -, ~, * / // %, **, unary - +,
// then primaries with their postfix . [] () and the | filters and `is` tests.

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "jinja/parser_impl.h"

namespace llmserve::jinja {

bool Parser::IsTupleEnd(const std::set<std::string>& extra_end) const {
  if (Cur().type == T::kVarEnd || Cur().type == T::kBlockEnd || Cur().type == T::kEof) return true;
  if (Cur().type == T::kOperator && Cur().text == ")") return true;
  return Cur().type == T::kName && extra_end.count(Cur().text);
}

ExprPtr Parser::ParseTuple(bool with_condexpr, const std::set<std::string>& extra_end, bool explicit_parens) {
  const Token& start = Cur();
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) ExpectOp(",");
    if (IsTupleEnd(extra_end)) break;
    items.push_back(ParseExpression(with_condexpr));
    if (IsOp(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) FailAt(Cur(), "Expected an expression, got '" + Describe(Cur()) + "'");
  }
  auto e = Make(Expr::Kind::kTuple, start);
  e->operands = std::move(items);
  return e;
}

ExprPtr Parser::ParseExpression(bool with_condexpr) {
  DepthGuard guard(this);
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

ExprPtr Parser::ParseCondExpr() {
  ExprPtr expr = ParseOr();
  while (IsName("if")) {
    const Token& at = Next();
    auto e = Make(Expr::Kind::kCond, at);
    e->operands.push_back(ParseOr());
    e->operands.push_back(std::move(expr));
    if (SkipName("else")) {
      e->operands.push_back(ParseCondExpr());
    } else {
      e->operands.push_back(nullptr);
    }
    expr = std::move(e);
  }
  return expr;
}

ExprPtr Parser::Binary(Expr::Kind kind, const Token& at, ExprPtr a, ExprPtr b, std::string op) {
  auto e = Make(kind, at);
  e->name = std::move(op);
  e->operands.push_back(std::move(a));
  e->operands.push_back(std::move(b));
  return e;
}

ExprPtr Parser::ParseOr() {
  ExprPtr left = ParseAnd();
  while (IsName("or")) {
    const Token& at = Next();
    left = Binary(Expr::Kind::kOr, at, std::move(left), ParseAnd());
  }
  return left;
}

ExprPtr Parser::ParseAnd() {
  ExprPtr left = ParseNot();
  while (IsName("and")) {
    const Token& at = Next();
    left = Binary(Expr::Kind::kAnd, at, std::move(left), ParseNot());
  }
  return left;
}

ExprPtr Parser::ParseNot() {
  if (IsName("not")) {
    DepthGuard guard(this);
    const Token& at = Next();
    auto e = Make(Expr::Kind::kNot, at);
    e->operands.push_back(ParseNot());
    return e;
  }
  return ParseCompare();
}

ExprPtr Parser::ParseCompare() {
  const Token& start = Cur();
  ExprPtr expr = ParseMath1();
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (Cur().type == T::kOperator && (Cur().text == "==" || Cur().text == "!=" || Cur().text == "<" ||
                                       Cur().text == "<=" || Cur().text == ">" || Cur().text == ">=")) {
      op = Next().text;
    } else if (IsName("in")) {
      Next();
      op = "in";
    } else if (IsName("not") && Peek().type == T::kName && Peek().text == "in") {
      Next();
      Next();
      op = "notin";
    } else {
      break;
    }
    if (!cmp) {
      cmp = Make(Expr::Kind::kCompare, start);
      cmp->operands.push_back(std::move(expr));
    }
    cmp->ops.push_back(op);
    cmp->operands.push_back(ParseMath1());
  }
  return cmp ? std::move(cmp) : std::move(expr);
}

ExprPtr Parser::ParseMath1() {
  ExprPtr left = ParseConcat();
  while (IsOp("+") || IsOp("-")) {
    const Token& at = Next();
    left = Binary(Expr::Kind::kBinary, at, std::move(left), ParseConcat(), at.text);
  }
  return left;
}

ExprPtr Parser::ParseConcat() {
  const Token& start = Cur();
  ExprPtr first = ParseMath2();
  if (!IsOp("~")) return first;
  auto e = Make(Expr::Kind::kConcat, start);
  e->operands.push_back(std::move(first));
  while (SkipOp("~")) e->operands.push_back(ParseMath2());
  return e;
}

ExprPtr Parser::ParseMath2() {
  ExprPtr left = ParsePow();
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    const Token& at = Next();
    left = Binary(Expr::Kind::kBinary, at, std::move(left), ParsePow(), at.text);
  }
  return left;
}

ExprPtr Parser::ParsePow() {
  ExprPtr left = ParseUnary(true);
  while (IsOp("**")) {
    const Token& at = Next();
    left = Binary(Expr::Kind::kBinary, at, std::move(left), ParseUnary(true), "**");
  }
  return left;
}

ExprPtr Parser::ParseUnary(bool with_filter) {
  DepthGuard guard(this);
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    const Token& at = Next();
    node = Make(at.text == "-" ? Expr::Kind::kNeg : Expr::Kind::kPos, at);
    node->operands.push_back(ParseUnary(false));
  } else {
    node = ParsePrimary();
  }
  node = ParsePostfix(std::move(node));
  if (with_filter) node = ParseFilterExpr(std::move(node));
  return node;
}

ExprPtr Parser::ParsePrimary() {
  DepthGuard guard(this);
  const Token& t = Cur();
  if (t.type == T::kName) {
    Next();
    auto e = Make(Expr::Kind::kConst, t);
    if (t.text == "true" || t.text == "True") e->constant = Value::Bool(true);
    else if (t.text == "false" || t.text == "False") e->constant = Value::Bool(false);
    else if (t.text == "none" || t.text == "None") e->constant = Value::None();
    else {
      e->kind = Expr::Kind::kName;
      e->name = t.text;
    }
    return e;
  }
  if (t.type == T::kString) {
    std::string s;
    while (Cur().type == T::kString) s += Next().text;
    auto e = Make(Expr::Kind::kConst, t);
    e->constant = Value::String(std::move(s));
    return e;
  }
  if (t.type == T::kInteger) {
    Next();
    auto e = Make(Expr::Kind::kConst, t);
    errno = 0;
    long long v = std::strtoll(t.text.c_str(), nullptr, 10);
    if (errno == ERANGE) FailAt(t, "integer literal out of range");
    e->constant = Value::Int(v);
    return e;
  }
  if (t.type == T::kFloat) {
    Next();
    auto e = Make(Expr::Kind::kConst, t);
    e->constant = Value::Float(std::strtod(t.text.c_str(), nullptr));
    return e;
  }
  if (IsOp("(")) {
    Next();
    ExprPtr e = ParseTuple(true, {}, true);
    ExpectOp(")");
    return e;
  }
  if (IsOp("[")) {
    auto e = Make(Expr::Kind::kList, Next());
    while (!IsOp("]")) {
      if (!e->operands.empty()) ExpectOp(",");
      if (IsOp("]")) break;
      e->operands.push_back(ParseExpression(true));
    }
    ExpectOp("]");
    return e;
  }
  if (IsOp("{")) {
    auto e = Make(Expr::Kind::kDict, Next());
    while (!IsOp("}")) {
      if (!e->operands.empty()) ExpectOp(",");
      if (IsOp("}")) break;
      e->dict_keys.push_back(ParseExpression(true));
      ExpectOp(":");
      e->operands.push_back(ParseExpression(true));
    }
    ExpectOp("}");
    return e;
  }
  FailAt(t, "unexpected '" + Describe(t) + "'");
}

ExprPtr Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    if (IsOp(".") || IsOp("[")) {
      node = ParseSubscript(std::move(node));
    } else if (IsOp("(")) {
      node = ParseCall(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::ParseFilterExpr(ExprPtr node) {
  while (true) {
    if (IsOp("|")) {
      node = ParseFilters(std::move(node));
    } else if (IsName("is")) {
      node = ParseTest(std::move(node));
    } else if (IsOp("(")) {
      node = ParseCall(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::ParseSubscript(ExprPtr node) {
  DepthGuard guard(this);
  const Token& tok = Next();
  if (tok.text == ".") {
    const Token& attr = Cur();
    if (attr.type == T::kName) {
      Next();
      auto e = Make(Expr::Kind::kGetAttr, tok);
      e->name = attr.text;
      e->operands.push_back(std::move(node));
      return e;
    }
    if (attr.type != T::kInteger) FailAt(attr, "expected name or number");
    Next();
    auto key = Make(Expr::Kind::kConst, attr);
    key->constant = Value::Int(std::strtoll(attr.text.c_str(), nullptr, 10));
    auto e = Make(Expr::Kind::kGetItem, tok);
    e->operands.push_back(std::move(node));
    e->operands.push_back(std::move(key));
    return e;
  }
  // '[' subscript: an expression or a slice.
  std::vector<ExprPtr> args;
  bool slice = false;
  ExprPtr parts[3];
  if (!IsOp(":")) parts[0] = ParseExpression(true);
  if (IsOp(":")) {
    slice = true;
    Next();
    if (!IsOp(":") && !IsOp("]")) parts[1] = ParseExpression(true);
    if (SkipOp(":")) {
      if (!IsOp("]")) parts[2] = ParseExpression(true);
    }
  }
  if (IsOp(",")) FailAt(Cur(), "unsupported: tuple subscripts");
  ExpectOp("]");
  auto e = Make(slice ? Expr::Kind::kSlice : Expr::Kind::kGetItem, tok);
  e->operands.push_back(std::move(node));
  if (slice) {
    for (auto& p : parts) e->operands.push_back(std::move(p));
  } else {
    e->operands.push_back(std::move(parts[0]));
  }
  return e;
}

void Parser::ParseCallArgs(Expr* e) {
  const Token& open = Cur();
  ExpectOp("(");
  bool need_comma = false;
  while (!IsOp(")")) {
    if (need_comma) {
      ExpectOp(",");
      if (IsOp(")")) break;
    }
    if (IsOp("*") || IsOp("**")) FailAt(Cur(), "unsupported: *args/**kwargs in calls");
    if (Cur().type == T::kName && Peek().type == T::kOperator && Peek().text == "=") {
      std::string key = Next().text;
      Next();
      e->kwargs.emplace_back(key, ParseExpression(true));
    } else {
      if (!e->kwargs.empty()) FailAt(open, "invalid syntax for function call expression");
      e->operands.push_back(ParseExpression(true));
    }
    need_comma = true;
  }
  ExpectOp(")");
}

ExprPtr Parser::ParseCall(ExprPtr node) {
  DepthGuard guard(this);
  auto e = Make(Expr::Kind::kCall, Cur());
  e->line = node->line;  // errors in a call point at what is called
  e->column = node->column;
  e->operands.push_back(std::move(node));
  ParseCallArgs(e.get());
  return e;
}

ExprPtr Parser::ParseFilterChain(ExprPtr node, bool start_inline) {
  while (IsOp("|") || start_inline) {
    if (!start_inline) Next();
    start_inline = false;
    const Token& name = ExpectName();
    auto e = Make(Expr::Kind::kFilter, name);
    e->name = name.text;
    e->operands.push_back(std::move(node));
    if (IsOp("(")) ParseCallArgs(e.get());
    node = std::move(e);
  }
  return node;
}

ExprPtr Parser::ParseTest(ExprPtr node) {
  const Token& is = Next();
  auto e = Make(Expr::Kind::kTest, is);
  e->negated = SkipName("not");
  e->name = ExpectName().text;
  e->operands.push_back(std::move(node));
  if (IsOp("(")) {
    ParseCallArgs(e.get());
  } else if ((Cur().type == T::kName || Cur().type == T::kString || Cur().type == T::kInteger ||
              Cur().type == T::kFloat || IsOp("(") || IsOp("[") || IsOp("{")) &&
             !IsName("else") && !IsName("or") && !IsName("and")) {
    if (IsName("is")) FailAt(Cur(), "You cannot chain multiple tests with is");
    e->operands.push_back(ParsePostfix(ParsePrimary()));
  }
  return e;
}

}  // namespace llmserve::jinja
