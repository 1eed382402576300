#include "jinja/parser.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "jinja/error.h"

namespace llmserve::jinja {
namespace {

constexpr int kMaxDepth = 200;

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
}  // nesting limit: deeper templates are an error, not a stack overflow

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : toks_(tokens) {}

  StmtList ParseTemplate() {
    StmtList body = Subparse({});
    if (Cur().type != Token::Type::kEof) FailAt(Cur(), "unexpected '" + Describe(Cur()) + "'");
    return body;
  }

 private:
  using T = Token::Type;

  const Token& Cur() const { return toks_[pos_]; }
  const Token& Peek(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  const Token& Next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }

  static std::string Describe(const Token& t) {
    switch (t.type) {
      case T::kEof: return "end of template";
      case T::kVarBegin: return "begin of print statement";
      case T::kVarEnd: return "end of print statement";
      case T::kBlockBegin: return "begin of statement block";
      case T::kBlockEnd: return "end of statement block";
      case T::kData: return "template data";
      default: return t.text;
    }
  }

  [[noreturn]] static void FailAt(const Token& t, const std::string& msg) {
    throw TemplateError{msg, t.line, t.column};
  }

  bool IsOp(const char* op) const { return Cur().type == T::kOperator && Cur().text == op; }
  bool IsName(const char* name) const { return Cur().type == T::kName && Cur().text == name; }
  bool SkipOp(const char* op) {
    if (!IsOp(op)) return false;
    Next();
    return true;
  }
  bool SkipName(const char* name) {
    if (!IsName(name)) return false;
    Next();
    return true;
  }
  void ExpectOp(const char* op) {
    if (!SkipOp(op)) FailAt(Cur(), std::string("expected '") + op + "', got '" + Describe(Cur()) + "'");
  }
  const Token& ExpectName() {
    if (Cur().type != T::kName) FailAt(Cur(), "expected a name, got '" + Describe(Cur()) + "'");
    return Next();
  }
  void ExpectBlockEnd() {
    if (Cur().type != T::kBlockEnd) FailAt(Cur(), "expected end of statement block, got '" + Describe(Cur()) + "'");
    Next();
  }

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p(p) {
      if (++p->depth_ > kMaxDepth) FailAt(p->Cur(), "template nesting is too deep");
    }
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  ExprPtr Make(Expr::Kind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = at.line;
    e->column = at.column;
    return e;
  }

  // ---- statements ----

  // Parses template data and statements until a block whose tag is in `end_tags`
  // (left unconsumed, positioned at the tag name) or the end of the template.
  StmtList Subparse(const std::set<std::string>& end_tags) {
    DepthGuard guard(this);
    StmtList body;
    while (Cur().type != T::kEof) {
      const Token& t = Cur();
      if (t.type == T::kData) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kData;
        s->text = t.text;
        s->line = t.line;
        s->column = t.column;
        body.push_back(std::move(s));
        Next();
      } else if (t.type == T::kVarBegin) {
        Next();
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->line = Cur().line;
        s->column = Cur().column;
        s->expr = ParseTuple(true, {});
        if (Cur().type != T::kVarEnd) FailAt(Cur(), "expected end of print statement, got '" + Describe(Cur()) + "'");
        Next();
        body.push_back(std::move(s));
      } else if (t.type == T::kBlockBegin) {
        Next();
        if (Cur().type != T::kName) FailAt(Cur(), "tag name expected");
        if (end_tags.count(Cur().text)) return body;
        body.push_back(ParseStatement());
      } else {
        FailAt(t, "unexpected '" + Describe(t) + "'");
      }
    }
    if (!end_tags.empty()) {
      std::string names;
      for (const auto& n : end_tags) names += (names.empty() ? "'" : " or '") + n + "'";
      FailAt(Cur(), "unexpected end of template, expected " + names);
    }
    return body;
  }

  // Body up to one of `end_tags`; consumes the block end of the opening tag first.
  StmtList ParseBody(const std::set<std::string>& end_tags) {
    ExpectBlockEnd();
    return Subparse(end_tags);
  }

  std::unique_ptr<Stmt> NewStmt(Stmt::Kind kind, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = at.line;
    s->column = at.column;
    return s;
  }

  StmtPtr ParseStatement() {
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

  StmtPtr ParseIf() {
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

  Target ParseTarget(bool with_namespace) {
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

  StmtPtr ParseFor() {
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

  StmtPtr ParseSet() {
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

  void ParseSignature(Stmt* s) {
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

  StmtPtr ParseMacro() {
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

  StmtPtr ParseCallBlock() {
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

  StmtPtr ParseFilterBlock() {
    auto s = NewStmt(Stmt::Kind::kFilterBlock, Next());
    s->filter = ParseFilterChain(nullptr, true);
    s->bodies.push_back(ParseBody({"endfilter"}));
    Next();
    ExpectBlockEnd();
    return s;
  }

  StmtPtr ParseScope() {
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

  // ---- expressions ----

  bool IsTupleEnd(const std::set<std::string>& extra_end) const {
    if (Cur().type == T::kVarEnd || Cur().type == T::kBlockEnd || Cur().type == T::kEof) return true;
    if (Cur().type == T::kOperator && Cur().text == ")") return true;
    return Cur().type == T::kName && extra_end.count(Cur().text);
  }

  // Expression, or a tuple when commas separate several.
  ExprPtr ParseTuple(bool with_condexpr, const std::set<std::string>& extra_end, bool explicit_parens = false) {
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

  ExprPtr ParseExpression(bool with_condexpr) {
    DepthGuard guard(this);
    return with_condexpr ? ParseCondExpr() : ParseOr();
  }

  ExprPtr ParseCondExpr() {
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

  ExprPtr Binary(Expr::Kind kind, const Token& at, ExprPtr a, ExprPtr b, std::string op = {}) {
    auto e = Make(kind, at);
    e->name = std::move(op);
    e->operands.push_back(std::move(a));
    e->operands.push_back(std::move(b));
    return e;
  }

  ExprPtr ParseOr() {
    ExprPtr left = ParseAnd();
    while (IsName("or")) {
      const Token& at = Next();
      left = Binary(Expr::Kind::kOr, at, std::move(left), ParseAnd());
    }
    return left;
  }

  ExprPtr ParseAnd() {
    ExprPtr left = ParseNot();
    while (IsName("and")) {
      const Token& at = Next();
      left = Binary(Expr::Kind::kAnd, at, std::move(left), ParseNot());
    }
    return left;
  }

  ExprPtr ParseNot() {
    if (IsName("not")) {
      DepthGuard guard(this);
      const Token& at = Next();
      auto e = Make(Expr::Kind::kNot, at);
      e->operands.push_back(ParseNot());
      return e;
    }
    return ParseCompare();
  }

  ExprPtr ParseCompare() {
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

  ExprPtr ParseMath1() {
    ExprPtr left = ParseConcat();
    while (IsOp("+") || IsOp("-")) {
      const Token& at = Next();
      left = Binary(Expr::Kind::kBinary, at, std::move(left), ParseConcat(), at.text);
    }
    return left;
  }

  ExprPtr ParseConcat() {
    const Token& start = Cur();
    ExprPtr first = ParseMath2();
    if (!IsOp("~")) return first;
    auto e = Make(Expr::Kind::kConcat, start);
    e->operands.push_back(std::move(first));
    while (SkipOp("~")) e->operands.push_back(ParseMath2());
    return e;
  }

  ExprPtr ParseMath2() {
    ExprPtr left = ParsePow();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      const Token& at = Next();
      left = Binary(Expr::Kind::kBinary, at, std::move(left), ParsePow(), at.text);
    }
    return left;
  }

  ExprPtr ParsePow() {
    ExprPtr left = ParseUnary(true);
    while (IsOp("**")) {
      const Token& at = Next();
      left = Binary(Expr::Kind::kBinary, at, std::move(left), ParseUnary(true), "**");
    }
    return left;
  }

  ExprPtr ParseUnary(bool with_filter) {
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

  ExprPtr ParsePrimary() {
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

  ExprPtr ParsePostfix(ExprPtr node) {
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

  ExprPtr ParseFilterExpr(ExprPtr node) {
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

  ExprPtr ParseSubscript(ExprPtr node) {
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

  void ParseCallArgs(Expr* e) {
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

  ExprPtr ParseCall(ExprPtr node) {
    DepthGuard guard(this);
    auto e = Make(Expr::Kind::kCall, Cur());
    e->line = node->line;  // errors in a call point at what is called
    e->column = node->column;
    e->operands.push_back(std::move(node));
    ParseCallArgs(e.get());
    return e;
  }

  // One or more `| name(args)` filters applied to `node` (null in filter blocks).
  ExprPtr ParseFilters(ExprPtr node) { return ParseFilterChain(std::move(node), false); }

  ExprPtr ParseFilterChain(ExprPtr node, bool start_inline) {
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

  ExprPtr ParseTest(ExprPtr node) {
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

  const std::vector<Token>& toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

StmtList Parse(const std::vector<Token>& tokens) { return Parser(tokens).ParseTemplate(); }

}  // namespace llmserve::jinja
