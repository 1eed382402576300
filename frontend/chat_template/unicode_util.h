#pragma once
// The few Unicode facts Python's str methods depend on: UTF-8 <-> code
// points, str.isspace(), str.isprintable(), and simple case mapping (utf8proc).

#include <string>
#include <string_view>

namespace llmserve::frontend::jinja {

// Decodes UTF-8; invalid bytes decode to U+FFFD (inputs are valid JSON strings).
std::u32string DecodeUtf8(std::string_view s);
// Encodes code points as UTF-8.
std::string EncodeUtf8(std::u32string_view s);
// Appends one code point as UTF-8.
void AppendUtf8(char32_t cp, std::string* out);
// Number of code points (Python's len(str)).
size_t Utf8Length(std::string_view s);
// True when every byte is ASCII (then bytes == code points).
bool IsAscii(std::string_view s);

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

}  // namespace llmserve::frontend::jinja
