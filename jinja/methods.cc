// Methods templates call on values: Python's str methods (startswith, split,
// strip, replace, format, ...), dict.get/items/keys/values, list.index/count,
// and loop.cycle. Mutating list/dict methods fail as in jinja2's
// ImmutableSandboxedEnvironment, which is what Hugging Face renders with.

#include <algorithm>
#include <string_view>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

// Linear scan: these sets are small and most lookups fail on the length.
bool In(const std::vector<std::string_view>& set, std::string_view name) {
  for (std::string_view s : set) {
    if (s.size() == name.size() && s == name) return true;
  }
  return false;
}

const std::vector<std::string_view>& StrMethods() {
  static const std::vector<std::string_view> k = {
      "startswith", "endswith", "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "upper",
      "lower", "title", "capitalize", "swapcase", "format", "find", "rfind", "index", "rindex", "count",
      "join", "isdigit", "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace", "isupper", "islower",
      "splitlines", "casefold", "zfill", "center", "ljust", "rjust", "partition", "rpartition",
      "removeprefix", "removesuffix"};
  return k;
}
const std::vector<std::string_view>& DictMethods() {
  static const std::vector<std::string_view> k = {"get", "items", "keys", "values", "copy"};
  return k;
}
const std::vector<std::string_view>& DictUnsafe() {
  static const std::vector<std::string_view> k = {"pop", "popitem", "setdefault", "update", "clear"};
  return k;
}
const std::vector<std::string_view>& ListMethods() {
  static const std::vector<std::string_view> k = {"index", "count", "copy"};
  return k;
}
const std::vector<std::string_view>& ListUnsafe() {
  static const std::vector<std::string_view> k = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
  return k;
}

const std::string& ArgStr(const Value& v, const char* method) {
  if (!v.is_string()) Fail(std::string(method) + "() argument must be str, not " + TypeName(v));
  return v.str();
}

bool IsSpaceSet(char32_t cp, const std::u32string* chars) {
  return chars ? chars->find(cp) != std::u32string::npos : IsPySpace(cp);
}

// Python str.split / rsplit.
Value Split(const std::string& s, const Value& sep_v, int64_t maxsplit, bool from_right) {
  std::vector<Value> parts;
  if (sep_v.is_undefined() || sep_v.is_none()) {
    std::u32string cps = ToCodePoints(s);
    std::vector<std::u32string> words;
    if (!from_right) {
      size_t i = 0;
      while (true) {
        while (i < cps.size() && IsPySpace(cps[i])) ++i;
        if (i >= cps.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
          words.push_back(cps.substr(i));
          break;
        }
        size_t j = i;
        while (j < cps.size() && !IsPySpace(cps[j])) ++j;
        words.push_back(cps.substr(i, j - i));
        i = j;
      }
    } else {
      size_t end = cps.size();
      while (true) {
        while (end > 0 && IsPySpace(cps[end - 1])) --end;
        if (end == 0) break;
        if (maxsplit >= 0 && static_cast<int64_t>(words.size()) == maxsplit) {
          words.push_back(cps.substr(0, end));
          break;
        }
        size_t j = end;
        while (j > 0 && !IsPySpace(cps[j - 1])) --j;
        words.push_back(cps.substr(j, end - j));
        end = j;
      }
      std::reverse(words.begin(), words.end());
    }
    for (const auto& w : words) parts.push_back(Value::String(FromCodePoints(w)));
    return Value::List(std::move(parts));
  }
  const std::string& sep = ArgStr(sep_v, "split");
  if (sep.empty()) Fail("empty separator");
  std::vector<std::string> pieces;
  if (!from_right) {
    size_t start = 0;
    while (true) {
      size_t at = s.find(sep, start);
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit)) {
        pieces.push_back(s.substr(start));
        break;
      }
      pieces.push_back(s.substr(start, at - start));
      start = at + sep.size();
    }
  } else {
    size_t end = s.size();
    while (true) {
      size_t at = end >= sep.size() ? s.rfind(sep, end - sep.size()) : std::string::npos;
      if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(pieces.size()) == maxsplit)) {
        pieces.push_back(s.substr(0, end));
        break;
      }
      pieces.push_back(s.substr(at + sep.size(), end - at - sep.size()));
      end = at;
    }
    std::reverse(pieces.begin(), pieces.end());
  }
  for (auto& p : pieces) parts.push_back(Value::String(std::move(p)));
  return Value::List(std::move(parts));
}

std::string Replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  std::string out;
  if (from.empty()) {
    std::u32string cps = ToCodePoints(s);
    int64_t n = 0;
    for (char32_t cp : cps) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      AppendUtf8(cp, &out);
    }
    if (count < 0 || n < count) out += to;
    return out;
  }
  size_t start = 0;
  int64_t n = 0;
  while (count < 0 || n < count) {
    size_t at = s.find(from, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start);
    out += to;
    start = at + from.size();
    ++n;
  }
  out.append(s, start, std::string::npos);
  return out;
}

std::string Title(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (char32_t cp : ToCodePoints(s)) {
    AppendUtf8(prev_cased ? ToLower(cp) : ToUpper(cp), &out);
    prev_cased = IsCased(cp);
  }
  return out;
}

std::string Capitalize(const std::string& s) {
  std::string out;
  bool first = true;
  for (char32_t cp : ToCodePoints(s)) {
    AppendUtf8(first ? ToUpper(cp) : ToLower(cp), &out);
    first = false;
  }
  return out;
}

template <typename Pred>
bool AllChars(const std::string& s, Pred pred) {
  std::u32string cps = ToCodePoints(s);
  if (cps.empty()) return false;
  for (char32_t cp : cps) {
    if (!pred(cp)) return false;
  }
  return true;
}

// Python str.format with positional/keyword fields, !s/!r conversions and
// attribute/index lookups; format specs beyond an empty one are refused.
std::string Format(const std::string& fmt, const CallArgs& args) {
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

// Code point index of byte offset `at` in s.
int64_t CpIndex(const std::string& s, size_t at) {
  return static_cast<int64_t>(CountCodePoints(std::string_view(s).substr(0, at)));
}

bool StrMethod(const std::string& s, const std::string& name, CallArgs& args, Value* out) {
  if (name == "startswith" || name == "endswith") {
    auto a = BindArgs(name.c_str(), args, {"prefix"}, 1);
    std::vector<Value> options = a[0].kind() == Value::Kind::kTuple ? a[0].items() : std::vector<Value>{a[0]};
    bool hit = false;
    for (const Value& o : options) {
      const std::string& p = ArgStr(o, name.c_str());
      if (p.size() > s.size()) continue;
      hit |= name == "startswith" ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0;
    }
    *out = Value::Bool(hit);
  } else if (name == "split" || name == "rsplit") {
    auto a = BindArgs(name.c_str(), args, {"sep", "maxsplit"});
    int64_t maxsplit = a[1].is_undefined() ? -1 : a[1].as_int();
    *out = Split(s, a[0], maxsplit, name == "rsplit");
  } else if (name == "strip" || name == "lstrip" || name == "rstrip") {
    auto a = BindArgs(name.c_str(), args, {"chars"});
    std::string chars = a[0].is_string() ? a[0].str() : std::string();
    bool have = a[0].is_string();
    *out = Value::String(StripStr(s, have ? &chars : nullptr, name != "rstrip", name != "lstrip"));
  } else if (name == "replace") {
    auto a = BindArgs("replace", args, {"old", "new", "count"}, 2);
    *out = Value::String(Replace(s, ArgStr(a[0], "replace"), ArgStr(a[1], "replace"),
                                 a[2].is_undefined() ? -1 : a[2].as_int()));
  } else if (name == "upper") {
    BindArgs("upper", args, {});
    *out = Value::String(StrUpper(s));
  } else if (name == "lower" || name == "casefold") {
    BindArgs(name.c_str(), args, {});
    *out = Value::String(StrLower(s));
  } else if (name == "title") {
    BindArgs("title", args, {});
    *out = Value::String(Title(s));
  } else if (name == "capitalize") {
    BindArgs("capitalize", args, {});
    *out = Value::String(Capitalize(s));
  } else if (name == "swapcase") {
    BindArgs("swapcase", args, {});
    std::string r;
    for (char32_t cp : ToCodePoints(s)) AppendUtf8(IsUpper(cp) ? ToLower(cp) : IsLower(cp) ? ToUpper(cp) : cp, &r);
    *out = Value::String(std::move(r));
  } else if (name == "format") {
    *out = Value::String(Format(s, args));
  } else if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
    auto a = BindArgs(name.c_str(), args, {"sub"}, 1);
    const std::string& sub = ArgStr(a[0], name.c_str());
    size_t at = (name == "find" || name == "index") ? s.find(sub) : s.rfind(sub);
    if (at == std::string::npos && (name == "index" || name == "rindex")) Fail("substring not found");
    *out = Value::Int(at == std::string::npos ? -1 : CpIndex(s, at));
  } else if (name == "count") {
    auto a = BindArgs("count", args, {"sub"}, 1);
    const std::string& sub = ArgStr(a[0], "count");
    int64_t n = 0;
    if (sub.empty()) {
      n = static_cast<int64_t>(CountCodePoints(s)) + 1;
    } else {
      for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
    }
    *out = Value::Int(n);
  } else if (name == "join") {
    auto a = BindArgs("join", args, {"iterable"}, 1);
    std::string r;
    bool first = true;
    for (const Value& v : Iterate(a[0])) {
      if (!v.is_string()) Fail(std::string("sequence item: expected str instance, ") + TypeName(v) + " found");
      if (!first) r += s;
      r += v.str();
      first = false;
    }
    *out = Value::String(std::move(r));
  } else if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") {
    BindArgs(name.c_str(), args, {});
    *out = Value::Bool(AllChars(s, IsDigit));
  } else if (name == "isalpha") {
    BindArgs("isalpha", args, {});
    *out = Value::Bool(AllChars(s, IsAlpha));
  } else if (name == "isalnum") {
    BindArgs("isalnum", args, {});
    *out = Value::Bool(AllChars(s, [](char32_t c) { return IsAlpha(c) || IsDigit(c); }));
  } else if (name == "isspace") {
    BindArgs("isspace", args, {});
    *out = Value::Bool(AllChars(s, IsPySpace));
  } else if (name == "isupper" || name == "islower") {
    BindArgs(name.c_str(), args, {});
    bool upper = name == "isupper", any_cased = false, ok = true;
    for (char32_t cp : ToCodePoints(s)) {
      if (IsCased(cp)) {
        any_cased = true;
        if (upper ? IsLower(cp) : IsUpper(cp)) ok = false;
      }
    }
    *out = Value::Bool(ok && any_cased);
  } else if (name == "splitlines") {
    auto a = BindArgs("splitlines", args, {"keepends"});
    bool keep = a[0].Truthy();
    std::vector<Value> lines;
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n' || s[i] == '\r') {
        size_t end = i;
        if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
        lines.push_back(Value::String(s.substr(start, (keep ? i + 1 : end) - start)));
        start = i + 1;
      }
    }
    if (start < s.size()) lines.push_back(Value::String(s.substr(start)));
    *out = Value::List(std::move(lines));
  } else if (name == "zfill" || name == "center" || name == "ljust" || name == "rjust") {
    auto a = BindArgs(name.c_str(), args, {"width", "fillchar"}, 1);
    if (!a[0].is_int()) Fail(name + "() width must be an integer");
    int64_t width = a[0].as_int(), len = static_cast<int64_t>(CountCodePoints(s));
    std::string fill = a[1].is_string() ? a[1].str() : (name == "zfill" ? "0" : " ");
    if (CountCodePoints(fill) != 1) Fail("The fill character must be exactly one character long");
    int64_t pad = std::max<int64_t>(0, std::min<int64_t>(width, 1 << 20) - len);
    auto rep = [&](int64_t n) { std::string r; for (int64_t i = 0; i < n; ++i) r += fill; return r; };
    if (name == "ljust") *out = Value::String(s + rep(pad));
    else if (name == "rjust") *out = Value::String(rep(pad) + s);
    else if (name == "center") {
      int64_t left = pad / 2 + (pad & width & 1);
      *out = Value::String(rep(left) + s + rep(pad - left));
    } else {
      bool sign = !s.empty() && (s[0] == '-' || s[0] == '+');
      *out = Value::String(sign ? s.substr(0, 1) + rep(pad) + s.substr(1) : rep(pad) + s);
    }
  } else if (name == "partition" || name == "rpartition") {
    auto a = BindArgs(name.c_str(), args, {"sep"}, 1);
    const std::string& sep = ArgStr(a[0], name.c_str());
    if (sep.empty()) Fail("empty separator");
    size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
    if (at == std::string::npos) {
      *out = name == "partition" ? Value::Tuple({Value::String(s), Value::String(""), Value::String("")})
                                 : Value::Tuple({Value::String(""), Value::String(""), Value::String(s)});
    } else {
      *out = Value::Tuple({Value::String(s.substr(0, at)), Value::String(sep), Value::String(s.substr(at + sep.size()))});
    }
  } else if (name == "removeprefix" || name == "removesuffix") {
    auto a = BindArgs(name.c_str(), args, {"affix"}, 1);
    const std::string& p = ArgStr(a[0], name.c_str());
    if (name == "removeprefix") {
      *out = Value::String(s.compare(0, p.size(), p) == 0 ? s.substr(p.size()) : s);
    } else {
      bool ends = p.size() <= s.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
      *out = Value::String(ends && !p.empty() ? s.substr(0, s.size() - p.size()) : s);
    }
  } else {
    return false;
  }
  return true;
}

[[noreturn]] void Unsafe(const Value& self, const std::string& name) {
  Fail("access to attribute '" + name + "' of '" + TypeName(self) + "' object is unsafe.");
}

}  // namespace

std::string StripStr(const std::string& s, const std::string* chars, bool left, bool right) {
  if (!chars && IsAscii(s)) {
    size_t b = 0, e = s.size();
    if (left) while (b < e && IsPySpace(static_cast<unsigned char>(s[b]))) ++b;
    if (right) while (e > b && IsPySpace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
  }
  std::u32string set;
  if (chars) set = ToCodePoints(*chars);
  std::u32string cps = ToCodePoints(s);
  size_t b = 0, e = cps.size();
  if (left) while (b < e && IsSpaceSet(cps[b], chars ? &set : nullptr)) ++b;
  if (right) while (e > b && IsSpaceSet(cps[e - 1], chars ? &set : nullptr)) --e;
  return FromCodePoints(std::u32string_view(cps).substr(b, e - b));
}

bool HasMethod(const Value& self, const std::string& name) {
  switch (self.kind()) {
    case Value::Kind::kString: return In(StrMethods(), name);
    case Value::Kind::kDict: return In(DictMethods(), name) || In(DictUnsafe(), name);
    case Value::Kind::kList: return In(ListMethods(), name) || In(ListUnsafe(), name);
    case Value::Kind::kTuple: return name == "index" || name == "count";
    default: return false;
  }
}

bool CallMethod(const Value& self, const std::string& name, CallArgs& args, Value* out) {
  switch (self.kind()) {
    case Value::Kind::kString:
      return StrMethod(self.str(), name, args, out);
    case Value::Kind::kDict: {
      if (In(DictUnsafe(), name)) Unsafe(self, name);
      const Dict& d = self.dict();
      if (name == "get") {
        auto a = BindArgs("get", args, {"key", "default"}, 1);
        const Value* v = a[0].is_string() ? d.Find(a[0].str()) : nullptr;
        *out = v ? *v : (a[1].is_undefined() ? Value::None() : a[1]);
      } else if (name == "items") {
        BindArgs("items", args, {});
        std::vector<Value> items;
        items.reserve(d.items.size());
        for (const auto& [k, v] : d.items) items.push_back(Value::Tuple({Value::String(k), v}));
        *out = Value::List(std::move(items));
      } else if (name == "keys") {
        BindArgs("keys", args, {});
        *out = Value::List(Iterate(self));
      } else if (name == "values") {
        BindArgs("values", args, {});
        std::vector<Value> values;
        for (const auto& kv : d.items) values.push_back(kv.second);
        *out = Value::List(std::move(values));
      } else if (name == "copy") {
        BindArgs("copy", args, {});
        *out = self;
      } else {
        return false;
      }
      return true;
    }
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      if (self.kind() == Value::Kind::kList && In(ListUnsafe(), name)) Unsafe(self, name);
      if (name == "index" || name == "count") {
        auto a = BindArgs(name.c_str(), args, {"value"}, 1);
        int64_t n = 0;
        for (size_t i = 0; i < self.items().size(); ++i) {
          if (Equals(self.items()[i], a[0])) {
            if (name == "index") {
              *out = Value::Int(static_cast<int64_t>(i));
              return true;
            }
            ++n;
          }
        }
        if (name == "index") Fail(PyRepr(a[0]) + " is not in list");
        *out = Value::Int(n);
        return true;
      }
      if (name == "copy" && self.kind() == Value::Kind::kList) {
        BindArgs("copy", args, {});
        *out = self;
        return true;
      }
      return false;
    }
    case Value::Kind::kLoop:
      if (name == "cycle") {
        if (args.args.empty()) Fail("no items for cycling given");
        *out = args.args[self.loop().index0 % args.args.size()];
        return true;
      }
      return false;
    default:
      return false;
  }
}

}  // namespace llmserve::jinja
