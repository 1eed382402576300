#include "jinja/unicode_util.h"

#include <utf8proc.h>

namespace llmserve::jinja {

bool IsPySpace(char32_t cp) {
  switch (cp) {
    case ' ': case '\t': case '\n': case '\v': case '\f': case '\r':
    case 0x1C: case 0x1D: case 0x1E: case 0x1F: case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {
utf8proc_category_t Category(char32_t cp) {
  if (cp > 0x10FFFF) return UTF8PROC_CATEGORY_CN;
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}
}  // namespace

bool IsPyPrintable(char32_t cp) {
  if (cp == ' ') return true;
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO: case UTF8PROC_CATEGORY_CN: case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: case UTF8PROC_CATEGORY_ZS:
      return false;
    default:
      return true;
  }
}

char32_t ToUpper(char32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') ? cp - 32 : cp;
  return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp)));
}

char32_t ToLower(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}

bool IsAlpha(char32_t cp) {
  switch (Category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool IsDigit(char32_t cp) { return Category(cp) == UTF8PROC_CATEGORY_ND; }
bool IsUpper(char32_t cp) { return Category(cp) == UTF8PROC_CATEGORY_LU || Category(cp) == UTF8PROC_CATEGORY_LT; }
bool IsLower(char32_t cp) { return Category(cp) == UTF8PROC_CATEGORY_LL; }
bool IsCased(char32_t cp) { return IsUpper(cp) || IsLower(cp); }

std::string StrUpper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (IsAscii(s)) {
    for (char c : s) out.push_back(static_cast<char>(ToUpper(static_cast<unsigned char>(c))));
    return out;
  }
  for (char32_t cp : ToCodePoints(s)) AppendUtf8(ToUpper(cp), &out);
  return out;
}

std::string StrLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  if (IsAscii(s)) {
    for (char c : s) out.push_back(static_cast<char>(ToLower(static_cast<unsigned char>(c))));
    return out;
  }
  for (char32_t cp : ToCodePoints(s)) AppendUtf8(ToLower(cp), &out);
  return out;
}

}  // namespace llmserve::jinja
