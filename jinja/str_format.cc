// Python's str.format: positional and keyword fields, !s / !r conversions and
// attribute / index lookups in field names; format specs are refused.

#include <string>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {

std::string StrFormat(const std::string& fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      Fail("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos) Fail("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conv;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      conv = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    if (!spec.empty()) Fail("unsupported: format spec '" + spec + "' in str.format");
    size_t name_end = field.find_first_of(".[");
    std::string head = field.substr(0, name_end);
    Value v;
    if (head.empty()) {
      if (auto_index >= args.args.size()) Fail("Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = args.args[auto_index++];
    } else if (head.find_first_not_of("0123456789") == std::string::npos) {
      size_t idx = std::stoul(head);
      if (idx >= args.args.size()) Fail("Replacement index " + head + " out of range for positional args tuple");
      v = args.args[idx];
    } else {
      bool found = false;
      for (const auto& [k, kv] : args.kwargs) {
        if (k == head) {
          v = kv;
          found = true;
        }
      }
      if (!found) Fail("KeyError: '" + head + "'");
    }
    size_t p = name_end;
    while (p != std::string::npos && p < field.size()) {
      if (field[p] == '.') {
        size_t e = field.find_first_of(".[", p + 1);
        v = GetAttr(v, field.substr(p + 1, e == std::string::npos ? std::string::npos : e - p - 1));
        p = e;
      } else {
        size_t e = field.find(']', p);
        if (e == std::string::npos) Fail("Missing ']' in format string");
        std::string key = field.substr(p + 1, e - p - 1);
        bool numeric = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
        v = GetItem(v, numeric ? Value::Int(std::stoll(key)) : Value::String(key));
        p = e + 1;
      }
    }
    RequireDefined(v);
    out += conv == "r" ? PyRepr(v) : PyStr(v);
  }
  return out;
}

}  // namespace llmserve::jinja
