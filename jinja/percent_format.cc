// Python's printf-style string formatting (`'%s: %d' % (a, b)` and jinja2's
// `format` filter): conversions s r a d i u f F e E g G x X o c %, flags
// - + space 0 #, width, precision, and %(name)s with a dict argument.

#include <cmath>
#include <cstdio>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

std::string Pad(std::string s, size_t width, bool left) {
  size_t len = CountCodePoints(s);
  if (len >= width) return s;
  std::string fill(width - len, ' ');
  return left ? Cat({s, fill}) : Cat({fill, s});
}

}  // namespace

std::string PercentFormat(const std::string& fmt, const Value& arg) {
  std::vector<Value> args;
  const Dict* mapping = nullptr;
  if (arg.kind() == Value::Kind::kTuple) {
    args = arg.items();
  } else {
    args.push_back(arg);
    if (arg.is_dict()) mapping = &arg.dict();
  }
  size_t next = 0;
  bool used_mapping = false;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size()) Fail("incomplete format");
    const Value* v = nullptr;
    if (fmt[i] == '(') {
      size_t close = fmt.find(')', i);
      if (close == std::string::npos) Fail("incomplete format key");
      if (!mapping) Fail("format requires a mapping");
      v = mapping->Find(fmt.substr(i + 1, close - i - 1));
      if (!v) Fail(Cat({"KeyError: '", std::string_view(fmt).substr(i + 1, close - i - 1), "'"}));
      used_mapping = true;
      i = close + 1;
    }
    std::string flags;
    while (i < fmt.size() && std::string("-+ 0#").find(fmt[i]) != std::string::npos) flags += fmt[i++];
    size_t width = 0;
    while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') width = std::min<size_t>(width * 10 + (fmt[i++] - '0'), 4096);
    int precision = -1;
    if (i < fmt.size() && fmt[i] == '.') {
      precision = 0;
      ++i;
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') precision = std::min(precision * 10 + (fmt[i++] - '0'), 300);
    }
    if (i >= fmt.size()) Fail("incomplete format");
    char conv = fmt[i];
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (!v) {
      if (next >= args.size()) Fail("not enough arguments for format string");
      v = &args[next++];
    }
    bool left = flags.find('-') != std::string::npos;
    switch (conv) {
      case 's':
      case 'r':
      case 'a': {
        std::string s = conv == 's' ? PyStr(*v) : PyRepr(*v);
        if (precision >= 0) s = FromCodePoints(ToCodePoints(s).substr(0, static_cast<size_t>(precision)));
        out += Pad(s, width, left);
        break;
      }
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c': {
        if (!v->is_number()) {
          Fail(Cat({"%", std::string_view(&conv, 1), " format: a number is required, not ", TypeName(*v)}));
        }
        if (conv == 'c') {
          std::string s;
          AppendUtf8(static_cast<char32_t>(v->as_int()), &s);
          out += Pad(s, width, left);
          break;
        }
        long long n = v->is_float() ? static_cast<long long>(std::trunc(v->as_double())) : v->as_int();
        std::string spec = Cat({"%", flags, std::to_string(width)});
        if (precision >= 0) spec += Cat({".", std::to_string(precision)});
        spec += "ll";
        spec += conv == 'i' || conv == 'u' ? 'd' : conv;
        char buf[4400];
        std::snprintf(buf, sizeof(buf), spec.c_str(), n);
        out += buf;
        break;
      }
      case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': {
        if (!v->is_number()) Fail(Cat({"must be real number, not ", TypeName(*v)}));
        std::string spec = Cat({"%", flags, std::to_string(width), ".", std::to_string(precision < 0 ? 6 : precision),
                                std::string_view(&conv, 1)});
        char buf[4800];
        std::snprintf(buf, sizeof(buf), spec.c_str(), v->as_double());
        out += buf;
        break;
      }
      default:
        Fail(Cat({"unsupported format character '", std::string_view(&conv, 1), "'"}));
    }
  }
  if (!used_mapping && !mapping && next < args.size()) Fail("not all arguments converted during string formatting");
  return out;
}

}  // namespace llmserve::jinja
