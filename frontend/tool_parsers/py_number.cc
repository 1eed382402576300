#include "frontend/tool_parsers/json_canon.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

// Numbers as Python's json module reads and writes them: integers keep their
// digits, anything with a fraction or exponent becomes a float in repr() form.

namespace llmserve::frontend::tool_parsers {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Checks JSON number grammar; sets *is_float when it has a fraction or exponent.
bool ValidNumber(std::string_view s, bool* is_float) {
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t start = i;
    while (i < n && IsDigit(s[i])) ++i;
    return i > start;
  };
  if (i < n && s[i] == '-') ++i;
  if (i >= n) return false;
  if (s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  *is_float = false;
  if (i < n && s[i] == '.') {
    ++i;
    if (!digits()) return false;
    *is_float = true;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
    *is_float = true;
  }
  return i == n;
}

}  // namespace

std::string PyFloatRepr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));  // "-1.25e+02"
  std::string sign;
  if (s.front() == '-') {
    sign = "-";
    s.remove_prefix(1);
  }
  size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int decpt = std::atoi(std::string(s.substr(e + 1)).c_str()) + 1;  // 0.DIGITS x 10^decpt
  int nd = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return sign + "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    if (decpt >= nd) return sign + digits + std::string(static_cast<size_t>(decpt - nd), '0') + ".0";
    return sign + digits.substr(0, static_cast<size_t>(decpt)) + "." +
           digits.substr(static_cast<size_t>(decpt));
  }
  std::string mant = digits.substr(0, 1);
  if (nd > 1) mant += "." + digits.substr(1);
  int exp = decpt - 1;
  std::string exp_digits = std::to_string(exp < 0 ? -exp : exp);
  if (exp_digits.size() < 2) exp_digits.insert(0, "0");
  return sign + mant + "e" + (exp < 0 ? "-" : "+") + exp_digits;
}

bool PyNumberText(std::string_view token, std::string* out) {
  bool is_float = false;
  if (!ValidNumber(token, &is_float)) return false;
  if (is_float) {
    *out += PyFloatRepr(std::strtod(std::string(token).c_str(), nullptr));
  } else {
    *out += token == "-0" ? "0" : token;  // Python's int("-0") is 0
  }
  return true;
}

}  // namespace llmserve::frontend::tool_parsers
