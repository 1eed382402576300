// Python's str methods as templates call them (startswith, split, strip,
// replace, format, ...), with Python's semantics on Unicode code points.

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

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

// Code point index of byte offset `at` in s.
int64_t CpIndex(const std::string& s, size_t at) {
  return static_cast<int64_t>(CountCodePoints(std::string_view(s).substr(0, at)));
}

// One str method: `s.name(args)`. `name` tells the methods that share an
// implementation (startswith / endswith...) apart.
using StrMethodFn = Value (*)(const std::string& s, const std::string& name, CallArgs& args);

Value StartsOrEndsWith(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"prefix"}, 1);
  std::vector<Value> options = a[0].kind() == Value::Kind::kTuple ? a[0].items() : std::vector<Value>{a[0]};
  bool hit = false;
  for (const Value& o : options) {
    const std::string& p = ArgStr(o, name.c_str());
    if (p.size() > s.size()) continue;
    hit |= name == "startswith" ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0;
  }
  return Value::Bool(hit);
}

Value SplitMethod(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"sep", "maxsplit"});
  int64_t maxsplit = a[1].is_undefined() ? -1 : a[1].as_int();
  return Split(s, a[0], maxsplit, name == "rsplit");
}

Value StripMethod(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"chars"});
  std::string chars = a[0].is_string() ? a[0].str() : std::string();
  bool have = a[0].is_string();
  return Value::String(StripStr(s, have ? &chars : nullptr, name != "rstrip", name != "lstrip"));
}

Value ReplaceMethod(const std::string& s, const std::string&, CallArgs& args) {
  auto a = BindArgs("replace", args, {"old", "new", "count"}, 2);
  return Value::String(Replace(s, ArgStr(a[0], "replace"), ArgStr(a[1], "replace"),
                               a[2].is_undefined() ? -1 : a[2].as_int()));
}

Value UpperMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("upper", args, {});
  return Value::String(StrUpper(s));
}

Value LowerMethod(const std::string& s, const std::string& name, CallArgs& args) {
  BindArgs(name.c_str(), args, {});
  return Value::String(StrLower(s));
}

Value TitleMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("title", args, {});
  return Value::String(Title(s));
}

Value CapitalizeMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("capitalize", args, {});
  return Value::String(Capitalize(s));
}

Value SwapCaseMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("swapcase", args, {});
  std::string r;
  for (char32_t cp : ToCodePoints(s)) AppendUtf8(IsUpper(cp) ? ToLower(cp) : IsLower(cp) ? ToUpper(cp) : cp, &r);
  return Value::String(std::move(r));
}

Value FormatMethod(const std::string& s, const std::string&, CallArgs& args) {
  return Value::String(StrFormat(s, args));
}

Value FindMethod(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"sub"}, 1);
  const std::string& sub = ArgStr(a[0], name.c_str());
  size_t at = (name == "find" || name == "index") ? s.find(sub) : s.rfind(sub);
  if (at == std::string::npos && (name == "index" || name == "rindex")) Fail("substring not found");
  return Value::Int(at == std::string::npos ? -1 : CpIndex(s, at));
}

Value CountMethod(const std::string& s, const std::string&, CallArgs& args) {
  auto a = BindArgs("count", args, {"sub"}, 1);
  const std::string& sub = ArgStr(a[0], "count");
  int64_t n = 0;
  if (sub.empty()) {
    n = static_cast<int64_t>(CountCodePoints(s)) + 1;
  } else {
    for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
  }
  return Value::Int(n);
}

Value JoinMethod(const std::string& s, const std::string&, CallArgs& args) {
  auto a = BindArgs("join", args, {"iterable"}, 1);
  std::string r;
  bool first = true;
  for (const Value& v : Iterate(a[0])) {
    if (!v.is_string()) Fail(std::string("sequence item: expected str instance, ") + TypeName(v) + " found");
    if (!first) r += s;
    r += v.str();
    first = false;
  }
  return Value::String(std::move(r));
}

Value IsDigitMethod(const std::string& s, const std::string& name, CallArgs& args) {
  BindArgs(name.c_str(), args, {});
  return Value::Bool(AllChars(s, IsDigit));
}

Value IsAlphaMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("isalpha", args, {});
  return Value::Bool(AllChars(s, IsAlpha));
}

Value IsAlnumMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("isalnum", args, {});
  return Value::Bool(AllChars(s, [](char32_t c) { return IsAlpha(c) || IsDigit(c); }));
}

Value IsSpaceMethod(const std::string& s, const std::string&, CallArgs& args) {
  BindArgs("isspace", args, {});
  return Value::Bool(AllChars(s, IsPySpace));
}

Value IsUpperOrLowerMethod(const std::string& s, const std::string& name, CallArgs& args) {
  BindArgs(name.c_str(), args, {});
  bool upper = name == "isupper", any_cased = false, ok = true;
  for (char32_t cp : ToCodePoints(s)) {
    if (IsCased(cp)) {
      any_cased = true;
      if (upper ? IsLower(cp) : IsUpper(cp)) ok = false;
    }
  }
  return Value::Bool(ok && any_cased);
}

Value SplitLinesMethod(const std::string& s, const std::string&, CallArgs& args) {
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
  return Value::List(std::move(lines));
}

// zfill, center, ljust, rjust.
Value PadMethod(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"width", "fillchar"}, 1);
  if (!a[0].is_int()) Fail(name + "() width must be an integer");
  int64_t width = a[0].as_int(), len = static_cast<int64_t>(CountCodePoints(s));
  std::string fill = a[1].is_string() ? a[1].str() : (name == "zfill" ? "0" : " ");
  if (CountCodePoints(fill) != 1) Fail("The fill character must be exactly one character long");
  int64_t pad = std::max<int64_t>(0, std::min<int64_t>(width, 1 << 20) - len);
  auto rep = [&](int64_t n) { std::string r; for (int64_t i = 0; i < n; ++i) r += fill; return r; };
  if (name == "ljust") return Value::String(s + rep(pad));
  if (name == "rjust") return Value::String(rep(pad) + s);
  if (name == "center") {
    int64_t left = pad / 2 + (pad & width & 1);
    return Value::String(rep(left) + s + rep(pad - left));
  }
  bool sign = !s.empty() && (s[0] == '-' || s[0] == '+');
  return Value::String(sign ? s.substr(0, 1) + rep(pad) + s.substr(1) : rep(pad) + s);
}

Value PartitionMethod(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"sep"}, 1);
  const std::string& sep = ArgStr(a[0], name.c_str());
  if (sep.empty()) Fail("empty separator");
  size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
  if (at == std::string::npos) {
    return name == "partition" ? Value::Tuple({Value::String(s), Value::String(""), Value::String("")})
                               : Value::Tuple({Value::String(""), Value::String(""), Value::String(s)});
  }
  return Value::Tuple({Value::String(s.substr(0, at)), Value::String(sep), Value::String(s.substr(at + sep.size()))});
}

Value RemoveAffixMethod(const std::string& s, const std::string& name, CallArgs& args) {
  auto a = BindArgs(name.c_str(), args, {"affix"}, 1);
  const std::string& p = ArgStr(a[0], name.c_str());
  if (name == "removeprefix") {
    return Value::String(s.compare(0, p.size(), p) == 0 ? s.substr(p.size()) : s);
  }
  bool ends = p.size() <= s.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
  return Value::String(ends && !p.empty() ? s.substr(0, s.size() - p.size()) : s);
}

// Every str method a template may call.
const std::unordered_map<std::string_view, StrMethodFn>& StrMethods() {
  static const std::unordered_map<std::string_view, StrMethodFn> k = {
      {"startswith", StartsOrEndsWith}, {"endswith", StartsOrEndsWith},
      {"split", SplitMethod},           {"rsplit", SplitMethod},
      {"strip", StripMethod},           {"lstrip", StripMethod},
      {"rstrip", StripMethod},          {"replace", ReplaceMethod},
      {"upper", UpperMethod},           {"lower", LowerMethod},
      {"casefold", LowerMethod},        {"title", TitleMethod},
      {"capitalize", CapitalizeMethod}, {"swapcase", SwapCaseMethod},
      {"format", FormatMethod},         {"find", FindMethod},
      {"rfind", FindMethod},            {"index", FindMethod},
      {"rindex", FindMethod},           {"count", CountMethod},
      {"join", JoinMethod},             {"isdigit", IsDigitMethod},
      {"isnumeric", IsDigitMethod},     {"isdecimal", IsDigitMethod},
      {"isalpha", IsAlphaMethod},       {"isalnum", IsAlnumMethod},
      {"isspace", IsSpaceMethod},       {"isupper", IsUpperOrLowerMethod},
      {"islower", IsUpperOrLowerMethod}, {"splitlines", SplitLinesMethod},
      {"zfill", PadMethod},             {"center", PadMethod},
      {"ljust", PadMethod},             {"rjust", PadMethod},
      {"partition", PartitionMethod},   {"rpartition", PartitionMethod},
      {"removeprefix", RemoveAffixMethod}, {"removesuffix", RemoveAffixMethod},
  };
  return k;
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

bool IsStrMethod(const std::string& name) { return StrMethods().count(name) > 0; }

bool CallStrMethod(const std::string& s, const std::string& name, CallArgs& args, Value* out) {
  auto it = StrMethods().find(name);
  if (it == StrMethods().end()) return false;
  *out = it->second(s, name, args);
  return true;
}

}  // namespace llmserve::jinja
