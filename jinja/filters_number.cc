// Filters on numbers: int, float (parsing strings as Python does), abs, round.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/filter_table.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {
namespace {

Value Round(const Value& v, int64_t precision, const std::string& method) {
  if (!v.is_number()) Fail(std::string("type ") + TypeName(v) + " doesn't define __round__ method");
  if (method != "common" && method != "ceil" && method != "floor") {
    Fail("method must be common, ceil or floor");
  }
  if (method == "common" && (v.is_int() || v.is_bool()) && precision >= 0) return Value::Int(v.as_int());
  double x = v.as_double();
  if (method == "common" && precision >= 0 && std::isfinite(x)) {
    // Python's round(): the exact binary value rounded half-even to `precision`
    // decimals, which glibc's printf does exactly.
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::min<int64_t>(precision, 300)), x);
    return Value::Float(std::strtod(buf, nullptr));
  }
  double scale = std::pow(10.0, static_cast<double>(precision));
  double y = x * scale;
  if (method == "ceil") y = std::ceil(y);
  else if (method == "floor") y = std::floor(y);
  else y = std::nearbyint(y);  // round-half-even, like Python's round()
  return Value::Float(y / scale);
}

Value ToInt(const Value& v, const Value& def, int64_t base) {
  Value fallback = def.is_undefined() ? Value::Int(0) : def;
  if (v.is_int() || v.is_bool()) return Value::Int(v.as_int());
  if (v.is_float()) {
    double d = v.as_double();
    if (!std::isfinite(d)) return fallback;
    return Value::Int(static_cast<int64_t>(std::trunc(d)));
  }
  if (v.is_string()) {
    std::string s = StripStr(v.str(), nullptr, true, true);
    std::string digits;
    for (char c : s) {
      if (c != '_') digits += c;
    }
    if (digits.empty()) return fallback;
    char* end = nullptr;
    errno = 0;
    long long r = std::strtoll(digits.c_str(), &end, static_cast<int>(base));
    if (*end == 0 && errno == 0) return Value::Int(r);
    double d = std::strtod(digits.c_str(), &end);
    if (*end == 0 && std::isfinite(d)) return Value::Int(static_cast<int64_t>(std::trunc(d)));
  }
  return fallback;
}

Value ToFloat(const Value& v, const Value& def) {
  Value fallback = def.is_undefined() ? Value::Float(0.0) : def;
  if (v.is_number()) return Value::Float(v.as_double());
  if (v.is_string()) {
    std::string s = StripStr(v.str(), nullptr, true, true);
    if (s.empty()) return fallback;
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (*end == 0) return Value::Float(d);
  }
  return fallback;
}

Value IntFilter(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("int", args, {"default", "base"});
  return ToInt(v, a[0], a[1].is_int() ? a[1].as_int() : 10);
}

Value FloatFilter(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("float", args, {"default"});
  return ToFloat(v, a[0]);
}

Value Abs(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("abs", args, {});
  if (v.is_int() || v.is_bool()) return v.as_int() < 0 ? Negate(v) : Value::Int(v.as_int());
  if (v.is_float()) return Value::Float(std::fabs(v.as_double()));
  Fail(std::string("bad operand type for abs(): '") + TypeName(v) + "'");
}

Value RoundFilter(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("round", args, {"precision", "method"});
  return Round(v, a[0].is_int() ? a[0].as_int() : 0, a[1].is_string() ? a[1].str() : "common");
}

}  // namespace

void AddNumberFilters(FilterTable* table) {
  table->insert({
      {"int", IntFilter},
      {"float", FloatFilter},
      {"abs", Abs},
      {"round", RoundFilter},
  });
}

}  // namespace llmserve::jinja
