#include "jinja/parser.h"

#include "jinja/error.h"
#include "jinja/parser_impl.h"

namespace llmserve::jinja {

// ---- the token cursor ----

const Token& Parser::Next() {
  const Token& t = toks_[pos_];
  if (pos_ + 1 < toks_.size()) ++pos_;
  return t;
}

std::string Parser::Describe(const Token& t) {
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

void Parser::FailAt(const Token& t, const std::string& msg) { throw TemplateError{msg, t.line, t.column}; }

bool Parser::SkipOp(const char* op) {
  if (!IsOp(op)) return false;
  Next();
  return true;
}

bool Parser::SkipName(const char* name) {
  if (!IsName(name)) return false;
  Next();
  return true;
}

void Parser::ExpectOp(const char* op) {
  if (!SkipOp(op)) FailAt(Cur(), std::string("expected '") + op + "', got '" + Describe(Cur()) + "'");
}

const Token& Parser::ExpectName() {
  if (Cur().type != T::kName) FailAt(Cur(), "expected a name, got '" + Describe(Cur()) + "'");
  return Next();
}

void Parser::ExpectBlockEnd() {
  if (Cur().type != T::kBlockEnd) FailAt(Cur(), "expected end of statement block, got '" + Describe(Cur()) + "'");
  Next();
}

Parser::DepthGuard::DepthGuard(Parser* p) : p(p) {
  if (++p->depth_ > kMaxDepth) FailAt(p->Cur(), "template nesting is too deep");
}

ExprPtr Parser::Make(Expr::Kind kind, const Token& at) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = at.line;
  e->column = at.column;
  return e;
}

StmtPtr Parser::NewStmt(Stmt::Kind kind, const Token& at) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->line = at.line;
  s->column = at.column;
  return s;
}

// ---- template bodies ----

StmtList Parser::ParseTemplate() {
  StmtList body = Subparse({});
  if (Cur().type != Token::Type::kEof) FailAt(Cur(), "unexpected '" + Describe(Cur()) + "'");
  return body;
}

StmtList Parser::Subparse(const std::set<std::string>& end_tags) {
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

StmtList Parser::ParseBody(const std::set<std::string>& end_tags) {
  ExpectBlockEnd();
  return Subparse(end_tags);
}

StmtList Parse(const std::vector<Token>& tokens) { return Parser(tokens).ParseTemplate(); }

}  // namespace llmserve::jinja
