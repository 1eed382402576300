#pragma once
// Lexer: template source -> tokens, with jinja2's whitespace rules as Hugging
// Face configures them (trim_blocks=True, lstrip_blocks=True, `-`/`+` markers,
// newlines normalised to \n, one trailing newline dropped).

#include <string>
#include <vector>

namespace llmserve::jinja {

struct Token {
  enum class Type {
    kData,        // literal template text
    kVarBegin,    // {{
    kVarEnd,      // }}
    kBlockBegin,  // {%
    kBlockEnd,    // %}
    kName,        // identifier or keyword
    kString,      // string literal (text holds the unescaped value)
    kInteger,     // integer literal (text holds the digits)
    kFloat,       // float literal
    kOperator,    // + - * / // % ** ~ == != < <= > >= = . : | , ( ) [ ] { } ;
    kEof,
  };
  Type type;
  std::string text;  // data, name, operator or literal value
  int line = 1;      // 1-based
  int column = 1;    // 1-based byte column
};

// Splits `source` into tokens. Throws TemplateError (error.h) with a position.
std::vector<Token> Tokenize(const std::string& source);

// "line 3, column 7", used in every error message.
std::string DescribePosition(int line, int column);

}  // namespace llmserve::jinja
