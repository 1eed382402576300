#pragma once
// The few Unicode facts Python's str methods depend on: str.isspace(),
// str.isprintable() and simple case mapping (utf8proc). UTF-8 itself is
// base/utf8.h, re-exported here for the interpreter's files.

#include <string>
#include <string_view>

#include "base/utf8.h"

namespace llmserve::jinja {

using base::AppendUtf8;
using base::CountCodePoints;
using base::FromCodePoints;
using base::IsAscii;
using base::ToCodePoints;

// Python's str.isspace() for one code point.
bool IsPySpace(char32_t cp);
// Python's str.isprintable() for one code point.
bool IsPyPrintable(char32_t cp);
// Simple upper/lower case mapping of one code point.
char32_t ToUpper(char32_t cp);
char32_t ToLower(char32_t cp);
// Python's str.isalpha()/isdigit()/isalnum() approximations via Unicode categories.
bool IsAlpha(char32_t cp);
bool IsDigit(char32_t cp);
bool IsCased(char32_t cp);
bool IsUpper(char32_t cp);
bool IsLower(char32_t cp);

// Python str.upper()/lower() of a UTF-8 string.
std::string StrUpper(std::string_view s);
std::string StrLower(std::string_view s);

}  // namespace llmserve::jinja
