#pragma once
// TemplateError: how the lexer, parser and interpreter report a failure
// internally. It never leaves this folder: Template::Parse and Template::Render
// turn it into a Status naming the template line and column.

#include <initializer_list>
#include <string>
#include <string_view>

namespace llmserve::jinja {

struct TemplateError {
  std::string message;  // what went wrong, jinja2-style where jinja2 has a message
  int line = 0;         // 1-based template line, 0 while unknown
  int column = 0;       // 1-based column (in bytes), 0 while unknown
  bool raised = false;  // true when the template called raise_exception()
};

// Concatenates pieces (sidesteps GCC 12's false -Wrestrict on chained operator+).
inline std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p.data(), p.size());
  return out;
}

// Throws a TemplateError with no position yet (the interpreter adds it).
[[noreturn]] void Fail(std::string message);

// Gives `e` the position `line`:`column` unless it already has one (the
// innermost statement or expression that failed names the place).
inline void AddPosition(TemplateError& e, int line, int column) {
  if (e.line == 0) {
    e.line = line;
    e.column = column;
  }
}

}  // namespace llmserve::jinja
