#include "jinja/py_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "jinja/callable.h"
#include "jinja/error.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {

std::string FormatFloat(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci looks like "-1.2345e+02": split sign, digits and exponent.
  bool neg = sci[0] == '-';
  size_t start = neg ? 1 : 0;
  size_t e = sci.find('e');
  std::string digits;
  for (size_t i = start; i < e; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  int exp10 = std::atoi(sci.c_str() + e + 1);
  std::string out = neg ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    } else if (static_cast<size_t>(exp10) + 1 >= digits.size()) {
      out += digits;
      out.append(static_cast<size_t>(exp10) + 1 - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exp10) + 1);
      out += '.';
      out += digits.substr(static_cast<size_t>(exp10) + 1);
    }
    return out;
  }
  out += digits[0];
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
  out += ebuf;
  return out;
}

std::string ReprString(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  char buf[16];
  for (char32_t cp : ToCodePoints(s)) {
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp < 0x80 || IsPyPrintable(cp)) {
      AppendUtf8(cp, &out);
    } else if (cp < 0x100) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if (cp < 0x10000) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      std::snprintf(buf, sizeof(buf), "\\U%08x", static_cast<unsigned>(cp));
      out += buf;
    }
  }
  out += quote;
  return out;
}

namespace {

void AppendItems(const std::vector<Value>& items, std::string* out) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) *out += ", ";
    *out += PyRepr(items[i]);
  }
}

std::string ReprDict(const Dict& d) {
  std::string out = "{";
  for (size_t i = 0; i < d.items.size(); ++i) {
    if (i) out += ", ";
    out += ReprString(d.items[i].first);
    out += ": ";
    out += PyRepr(d.items[i].second);
  }
  return out + "}";
}

}  // namespace

std::string PyRepr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString: return ReprString(v.str());
    case Value::Kind::kUndefined: return "Undefined";
    default: return PyStr(v);
  }
}

namespace {
// Guards str()/repr() of self-referencing namespaces.
struct ReprDepth {
  ReprDepth() {
    if (++depth > 200) {
      --depth;
      Fail("maximum recursion depth exceeded while getting the repr of an object");
    }
  }
  ~ReprDepth() { --depth; }
  static thread_local int depth;
};
thread_local int ReprDepth::depth = 0;
}  // namespace

std::string PyStr(const Value& v) {
  ReprDepth guard;
  switch (v.kind()) {
    case Value::Kind::kUndefined: return "";
    case Value::Kind::kNone: return "None";
    case Value::Kind::kBool: return v.as_bool() ? "True" : "False";
    case Value::Kind::kInt: return std::to_string(v.as_int());
    case Value::Kind::kFloat: return FormatFloat(v.as_double());
    case Value::Kind::kString: return v.str();
    case Value::Kind::kList: {
      std::string out = "[";
      AppendItems(v.items(), &out);
      return out + "]";
    }
    case Value::Kind::kTuple: {
      std::string out = "(";
      AppendItems(v.items(), &out);
      if (v.items().size() == 1) out += ",";
      return out + ")";
    }
    case Value::Kind::kDict: return ReprDict(v.dict());
    case Value::Kind::kNamespace: return "<Namespace " + ReprDict(v.ns().attrs) + ">";
    case Value::Kind::kCallable: return "<function " + v.callable().Name() + ">";
    case Value::Kind::kLoop: return "<LoopContext " + std::to_string(v.loop().index0 + 1) + "/" +
                                    std::to_string(v.loop().items->size()) + ">";
  }
  return "";
}

namespace {

void JsonString(const std::string& s, bool ensure_ascii, std::string* out) {
  *out += '"';
  char buf[16];
  auto escape_cp = [&](char32_t cp) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
    *out += buf;
  };
  if (!ensure_ascii || IsAscii(s)) {
    for (char c : s) {
      switch (c) {
        case '"': *out += "\\\""; break;
        case '\\': *out += "\\\\"; break;
        case '\n': *out += "\\n"; break;
        case '\r': *out += "\\r"; break;
        case '\t': *out += "\\t"; break;
        case '\b': *out += "\\b"; break;
        case '\f': *out += "\\f"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            escape_cp(static_cast<unsigned char>(c));
          } else {
            *out += c;
          }
      }
    }
  } else {
    for (char32_t cp : ToCodePoints(s)) {
      if (cp < 0x80) {
        std::string one(1, static_cast<char>(cp));
        std::string tmp;
        JsonString(one, false, &tmp);
        out->append(tmp, 1, tmp.size() - 2);
      } else if (cp < 0x10000) {
        escape_cp(cp);
      } else {
        char32_t v = cp - 0x10000;
        escape_cp(0xD800 + (v >> 10));
        escape_cp(0xDC00 + (v & 0x3FF));
      }
    }
  }
  *out += '"';
}

struct JsonWriter {
  const JsonOptions& opt;
  std::string item_sep;
  std::string key_sep;
  std::string out;
  int depth = 0;

  void Newline(int level) {
    out += '\n';
    for (int i = 0; i < level; ++i) out += *opt.indent;
  }

  void Write(const Value& v) {
    if (++depth > 512) Fail("maximum recursion depth exceeded while encoding a JSON object");
    switch (v.kind()) {
      case Value::Kind::kNone: out += "null"; break;
      case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; break;
      case Value::Kind::kInt: out += std::to_string(v.as_int()); break;
      case Value::Kind::kFloat: {
        double d = v.as_double();
        if (std::isnan(d)) out += "NaN";
        else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
        else out += FormatFloat(d);
        break;
      }
      case Value::Kind::kString: JsonString(v.str(), opt.ensure_ascii, &out); break;
      case Value::Kind::kList:
      case Value::Kind::kTuple: {
        const auto& items = v.items();
        if (items.empty()) { out += "[]"; break; }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (opt.indent) Newline(depth);
          Write(items[i]);
        }
        if (opt.indent) Newline(depth - 1);
        out += ']';
        break;
      }
      case Value::Kind::kDict:
      case Value::Kind::kNamespace: {
        if (v.kind() == Value::Kind::kNamespace) Fail("Object of type Namespace is not JSON serializable");
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& kv : v.dict().items) entries.push_back(&kv);
        if (opt.sort_keys) {
          std::stable_sort(entries.begin(), entries.end(),
                           [](const auto* a, const auto* b) { return a->first < b->first; });
        }
        if (entries.empty()) { out += "{}"; break; }
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i) out += item_sep;
          if (opt.indent) Newline(depth);
          JsonString(entries[i]->first, opt.ensure_ascii, &out);
          out += key_sep;
          Write(entries[i]->second);
        }
        if (opt.indent) Newline(depth - 1);
        out += '}';
        break;
      }
      default:
        Fail(std::string("Object of type ") + TypeName(v) + " is not JSON serializable");
    }
    --depth;
  }
};

}  // namespace

std::string ToJson(const Value& v, const JsonOptions& options) {
  JsonWriter w{options, options.item_sep.value_or(options.indent ? "," : ", "),
               options.key_sep.value_or(": "), {}, 0};
  w.Write(v);
  return std::move(w.out);
}

}  // namespace llmserve::jinja
