#pragma once
// Parser: the recursive-descent parser behind Parse() (parser.h). Internal to
// the parser's three files: parser.cc (the token cursor and template bodies),
// parser_statements.cc ({% ... %} tags) and parser_expressions.cc (jinja2's
// expression grammar and precedence).

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"

namespace llmserve::jinja {

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : toks_(tokens) {}

  // The whole template; throws TemplateError naming the position.
  StmtList ParseTemplate();

 private:
  using T = Token::Type;

  // Nesting limit: deeper templates are an error, not a stack overflow.
  static constexpr int kMaxDepth = 200;

  // Counts one level of recursion for as long as it lives.
  struct DepthGuard {
    explicit DepthGuard(Parser* p);
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  // ---- the token cursor (parser.cc) ----
  const Token& Cur() const { return toks_[pos_]; }
  const Token& Peek(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  const Token& Next();
  // How a token is named in error messages.
  static std::string Describe(const Token& t);
  [[noreturn]] static void FailAt(const Token& t, const std::string& msg);
  bool IsOp(const char* op) const { return Cur().type == T::kOperator && Cur().text == op; }
  bool IsName(const char* name) const { return Cur().type == T::kName && Cur().text == name; }
  bool SkipOp(const char* op);
  bool SkipName(const char* name);
  void ExpectOp(const char* op);
  const Token& ExpectName();
  void ExpectBlockEnd();
  static ExprPtr Make(Expr::Kind kind, const Token& at);
  static StmtPtr NewStmt(Stmt::Kind kind, const Token& at);

  // ---- template bodies (parser.cc) ----
  // Parses template data and statements until a block whose tag is in
  // `end_tags` (left unconsumed, positioned at the tag name) or the end.
  StmtList Subparse(const std::set<std::string>& end_tags);
  // Body up to one of `end_tags`; consumes the block end of the opening tag first.
  StmtList ParseBody(const std::set<std::string>& end_tags);

  // ---- statements (parser_statements.cc) ----
  StmtPtr ParseStatement();
  StmtPtr ParseIf();
  Target ParseTarget(bool with_namespace);
  StmtPtr ParseFor();
  StmtPtr ParseSet();
  void ParseSignature(Stmt* s);
  StmtPtr ParseMacro();
  StmtPtr ParseCallBlock();
  StmtPtr ParseFilterBlock();
  StmtPtr ParseScope();

  // ---- expressions (parser_expressions.cc) ----
  bool IsTupleEnd(const std::set<std::string>& extra_end) const;
  // Expression, or a tuple when commas separate several.
  ExprPtr ParseTuple(bool with_condexpr, const std::set<std::string>& extra_end, bool explicit_parens = false);
  ExprPtr ParseExpression(bool with_condexpr);
  ExprPtr ParseCondExpr();
  static ExprPtr Binary(Expr::Kind kind, const Token& at, ExprPtr a, ExprPtr b, std::string op = {});
  ExprPtr ParseOr();
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseCompare();
  ExprPtr ParseMath1();
  ExprPtr ParseConcat();
  ExprPtr ParseMath2();
  ExprPtr ParsePow();
  ExprPtr ParseUnary(bool with_filter);
  ExprPtr ParsePrimary();
  ExprPtr ParsePostfix(ExprPtr node);
  ExprPtr ParseFilterExpr(ExprPtr node);
  ExprPtr ParseSubscript(ExprPtr node);
  void ParseCallArgs(Expr* e);
  ExprPtr ParseCall(ExprPtr node);
  // One or more `| name(args)` filters applied to `node` (null in filter blocks).
  ExprPtr ParseFilters(ExprPtr node) { return ParseFilterChain(std::move(node), false); }
  ExprPtr ParseFilterChain(ExprPtr node, bool start_inline);
  ExprPtr ParseTest(ExprPtr node);

  const std::vector<Token>& toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace llmserve::jinja
