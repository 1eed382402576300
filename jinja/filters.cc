// jinja2's built-in filters as chat templates use them, with jinja2's
// argument names and defaults, and Hugging Face's `tojson` (json.dumps with
// ensure_ascii=False and no HTML escaping). Filters that return generators in
// jinja2 (map, select, unique, reverse, batch...) return lists here.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

using FilterFn = std::function<Value(Interpreter&, const Value&, CallArgs&)>;

// `a.b.c` looked up item-first on each part, as jinja2's make_attrgetter does.
Value AttrPath(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    v = GetItem(v, numeric ? Value::Int(std::atoll(part.c_str())) : Value::String(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

std::string AttrName(const Value& v) {
  if (v.is_int()) return std::to_string(v.as_int());
  if (!v.is_string()) Fail("attribute name must be a string");
  return v.str();
}

// Sort key comparison: case-insensitive for strings unless asked otherwise.
Value SortKey(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(StrLower(v.str()));
  return v;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string JinjaTitle(const std::string& s) {
  auto is_sep = [](char32_t c) { return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || IsPySpace(c); };
  std::string out;
  bool first_of_run = true;
  bool prev_sep = false;
  bool started = false;
  for (char32_t cp : ToCodePoints(s)) {
    bool sep = is_sep(cp);
    if (!started || sep != prev_sep) first_of_run = true;
    started = true;
    prev_sep = sep;
    AppendUtf8(first_of_run ? ToUpper(cp) : ToLower(cp), &out);
    first_of_run = false;
  }
  return out;
}

// select/reject/selectattr/rejectattr.
Value SelectImpl(Interpreter& interp, const Value& input, CallArgs& args, bool by_attr, bool keep) {
  size_t next = 0;
  std::string attr;
  if (by_attr) {
    if (args.args.empty()) Fail("Missing parameter for attribute name");
    attr = AttrName(args.args[0]);
    next = 1;
  }
  std::string test;
  CallArgs test_args;
  if (args.args.size() > next) {
    if (!args.args[next].is_string()) Fail("test name must be a string");
    test = args.args[next].str();
    test_args.args.assign(args.args.begin() + static_cast<long>(next) + 1, args.args.end());
    test_args.kwargs = args.kwargs;
  }
  std::vector<Value> out;
  for (const Value& item : Iterate(input)) {
    Value v = by_attr ? AttrPath(item, attr) : item;
    bool pass;
    if (test.empty()) {
      pass = v.Truthy();
    } else {
      CallArgs copy = test_args;
      pass = interp.Test(test, v, copy);
    }
    if (pass == keep) out.push_back(item);
  }
  return Value::List(std::move(out));
}

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

std::vector<Value> Sorted(std::vector<Value> items, bool reverse, bool case_sensitive, const std::string& attr) {
  std::vector<std::pair<Value, Value>> keyed;
  keyed.reserve(items.size());
  for (auto& it : items) keyed.emplace_back(SortKey(attr.empty() ? it : AttrPath(it, attr), case_sensitive), it);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? Less(b.first, a.first) : Less(a.first, b.first);
  });
  std::vector<Value> out;
  out.reserve(keyed.size());
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

Value MinMax(const Value& input, CallArgs& args, bool want_max, const char* name) {
  auto a = BindArgs(name, args, {"case_sensitive", "attribute"});
  std::string attr = a[1].is_undefined() || a[1].is_none() ? "" : AttrName(a[1]);
  std::vector<Value> items = Iterate(input);
  if (items.empty()) return Value::Undefined(std::string("No aggregated item, sequence was empty."));
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    Value ki = SortKey(attr.empty() ? items[i] : AttrPath(items[i], attr), a[0].Truthy());
    Value kb = SortKey(attr.empty() ? items[best] : AttrPath(items[best], attr), a[0].Truthy());
    if (want_max ? Less(kb, ki) : Less(ki, kb)) best = i;
  }
  return items[best];
}

const std::map<std::string, FilterFn>& Filters() {
  static const std::map<std::string, FilterFn> k = [] {
    std::map<std::string, FilterFn> m;
    m["tojson"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
      JsonOptions opt;
      opt.ensure_ascii = a[0].Truthy();
      if (a[1].is_int()) opt.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(a[1].as_int(), 0, 256)), ' ');
      else if (a[1].is_string()) opt.indent = a[1].str();
      else if (!a[1].is_undefined() && !a[1].is_none()) Fail("indent must be an integer or a string");
      if (a[2].is_sequence()) {
        if (a[2].items().size() != 2 || !a[2].items()[0].is_string() || !a[2].items()[1].is_string()) {
          Fail("separators must be a pair of strings");
        }
        opt.item_sep = a[2].items()[0].str();
        opt.key_sep = a[2].items()[1].str();
      }
      opt.sort_keys = a[3].Truthy();
      return Value::String(ToJson(v, opt));
    };
    m["trim"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("trim", args, {"chars"});
      std::string chars = a[0].is_string() ? a[0].str() : "";
      return Value::String(StripStr(PyStr(v), a[0].is_string() ? &chars : nullptr, true, true));
    };
    m["length"] = m["count"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("length", args, {});
      return Value::Int(Length(v));
    };
    m["items"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("items", args, {});
      if (v.is_undefined()) return Value::List({});
      if (!v.is_dict()) Fail("Can only get item pairs from a mapping.");
      std::vector<Value> out;
      for (const auto& [k, x] : v.dict().items) out.push_back(Value::Tuple({Value::String(k), x}));
      return Value::List(std::move(out));
    };
    m["selectattr"] = [](Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, true, true); };
    m["rejectattr"] = [](Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, true, false); };
    m["select"] = [](Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, false, true); };
    m["reject"] = [](Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, false, false); };
    m["map"] = [](Interpreter& interp, const Value& v, CallArgs& args) {
      std::vector<Value> out;
      const Value* attribute = nullptr;
      const Value* def = nullptr;
      for (const auto& [k, x] : args.kwargs) {
        if (k == "attribute") attribute = &x;
        else if (k == "default") def = &x;
      }
      if (attribute) {
        std::string attr = AttrName(*attribute);
        for (const Value& item : Iterate(v)) {
          Value x = AttrPath(item, attr);
          out.push_back(x.is_undefined() && def ? *def : x);
        }
        return Value::List(std::move(out));
      }
      if (args.args.empty()) Fail("map requires a filter argument");
      if (!args.args[0].is_string()) Fail("map filter name must be a string");
      std::string filter = args.args[0].str();
      CallArgs rest;
      rest.args.assign(args.args.begin() + 1, args.args.end());
      rest.kwargs = args.kwargs;
      for (const Value& item : Iterate(v)) {
        CallArgs copy = rest;
        out.push_back(interp.Filter(filter, item, copy));
      }
      return Value::List(std::move(out));
    };
    m["join"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("join", args, {"d", "attribute"});
      std::string sep = a[0].is_undefined() ? "" : PyStr(a[0]);
      std::string attr = a[1].is_undefined() || a[1].is_none() ? "" : AttrName(a[1]);
      std::string out;
      bool first = true;
      for (const Value& item : Iterate(v)) {
        if (!first) out += sep;
        out += PyStr(attr.empty() ? item : AttrPath(item, attr));
        first = false;
      }
      return Value::String(std::move(out));
    };
    m["default"] = m["d"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("default", args, {"default_value", "boolean"});
      Value def = a[0].is_undefined() ? Value::String("") : a[0];
      if (v.is_undefined() || (a[1].Truthy() && !v.Truthy())) return def;
      return v;
    };
    m["upper"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("upper", args, {});
      return Value::String(StrUpper(PyStr(v)));
    };
    m["lower"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("lower", args, {});
      return Value::String(StrLower(PyStr(v)));
    };
    m["title"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("title", args, {});
      return Value::String(JinjaTitle(PyStr(v)));
    };
    m["capitalize"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("capitalize", args, {});
      Value out;
      CallArgs none;
      CallMethod(Value::String(PyStr(v)), "capitalize", none, &out);
      return out;
    };
    m["replace"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("replace", args, {"old", "new", "count"}, 2);
      CallArgs margs;
      margs.args = {Value::String(PyStr(a[0])), Value::String(PyStr(a[1]))};
      if (!a[2].is_undefined() && !a[2].is_none()) margs.args.push_back(a[2]);
      Value out;
      CallMethod(Value::String(PyStr(v)), "replace", margs, &out);
      return out;
    };
    m["first"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("first", args, {});
      std::vector<Value> items = Iterate(v);
      return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
    };
    m["last"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("last", args, {});
      std::vector<Value> items = Iterate(v);
      return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
    };
    m["list"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("list", args, {});
      return Value::List(Iterate(v));
    };
    m["string"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("string", args, {});
      return v.is_string() ? v : Value::String(PyStr(v));
    };
    m["safe"] = m["string"];
    m["int"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("int", args, {"default", "base"});
      return ToInt(v, a[0], a[1].is_int() ? a[1].as_int() : 10);
    };
    m["float"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("float", args, {"default"});
      return ToFloat(v, a[0]);
    };
    m["abs"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("abs", args, {});
      if (v.is_int() || v.is_bool()) return v.as_int() < 0 ? Negate(v) : Value::Int(v.as_int());
      if (v.is_float()) return Value::Float(std::fabs(v.as_double()));
      Fail(std::string("bad operand type for abs(): '") + TypeName(v) + "'");
    };
    m["round"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("round", args, {"precision", "method"});
      return Round(v, a[0].is_int() ? a[0].as_int() : 0, a[1].is_string() ? a[1].str() : "common");
    };
    m["unique"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("unique", args, {"case_sensitive", "attribute"});
      std::string attr = a[1].is_undefined() || a[1].is_none() ? "" : AttrName(a[1]);
      std::vector<Value> out, seen;
      for (const Value& item : Iterate(v)) {
        Value key = SortKey(attr.empty() ? item : AttrPath(item, attr), a[0].Truthy());
        bool dup = false;
        for (const Value& s : seen) dup = dup || Equals(s, key);
        if (dup) continue;
        seen.push_back(key);
        out.push_back(item);
      }
      return Value::List(std::move(out));
    };
    m["reverse"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("reverse", args, {});
      if (v.is_string()) {
        std::u32string cps = ToCodePoints(v.str());
        std::reverse(cps.begin(), cps.end());
        return Value::String(FromCodePoints(cps));
      }
      std::vector<Value> items = Iterate(v);
      std::reverse(items.begin(), items.end());
      return Value::List(std::move(items));
    };
    m["sort"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("sort", args, {"reverse", "case_sensitive", "attribute"});
      std::string attr = a[2].is_undefined() || a[2].is_none() ? "" : AttrName(a[2]);
      return Value::List(Sorted(Iterate(v), a[0].Truthy(), a[1].Truthy(), attr));
    };
    m["dictsort"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("dictsort", args, {"case_sensitive", "by", "reverse"});
      if (!v.is_dict()) Fail("dictsort expects a mapping");
      bool by_value = a[1].is_string() && a[1].str() == "value";
      if (a[1].is_string() && !by_value && a[1].str() != "key") Fail("You can only sort by either \"key\" or \"value\"");
      std::vector<std::pair<Value, Value>> keyed;
      for (const auto& [k, x] : v.dict().items) {
        keyed.emplace_back(SortKey(by_value ? x : Value::String(k), a[0].Truthy()), Value::Tuple({Value::String(k), x}));
      }
      bool rev = a[2].Truthy();
      std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
        return rev ? Less(y.first, x.first) : Less(x.first, y.first);
      });
      std::vector<Value> out;
      for (auto& kv : keyed) out.push_back(kv.second);
      return Value::List(std::move(out));
    };
    m["batch"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("batch", args, {"linecount", "fill_with"}, 1);
      if (!a[0].is_int() || a[0].as_int() <= 0) Fail("batch size must be a positive integer");
      size_t n = static_cast<size_t>(a[0].as_int());
      std::vector<Value> out, cur;
      for (const Value& item : Iterate(v)) {
        cur.push_back(item);
        if (cur.size() == n) {
          out.push_back(Value::List(std::move(cur)));
          cur.clear();
        }
      }
      if (!cur.empty()) {
        if (!a[1].is_undefined() && !a[1].is_none()) {
          while (cur.size() < n) cur.push_back(a[1]);
        }
        out.push_back(Value::List(std::move(cur)));
      }
      return Value::List(std::move(out));
    };
    m["escape"] = m["e"] = m["forceescape"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("escape", args, {});
      return Value::String(Escape(PyStr(v)));
    };
    m["indent"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("indent", args, {"width", "first", "blank"});
      std::string ind = a[0].is_string() ? a[0].str()
                        : std::string(static_cast<size_t>(std::clamp<int64_t>(a[0].is_undefined() ? 4 : a[0].as_int(), 0, 1024)), ' ');
      std::string s = PyStr(v) + "\n";
      std::vector<std::string> lines;
      size_t start = 0;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\n' || s[i] == '\r') {
          lines.push_back(s.substr(start, i - start));
          if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
          start = i + 1;
        }
      }
      if (start < s.size()) lines.push_back(s.substr(start));
      std::string out;
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i) out += "\n";
        if (i && (a[2].Truthy() || !lines[i].empty())) out += ind;
        out += lines[i];
      }
      if (a[1].Truthy()) out = ind + out;
      return Value::String(std::move(out));
    };
    m["wordcount"] = [](Interpreter&, const Value& v, CallArgs& args) {
      BindArgs("wordcount", args, {});
      int64_t n = 0;
      bool in_word = false;
      for (char32_t cp : ToCodePoints(PyStr(v))) {
        bool w = cp == '_' || IsAlpha(cp) || IsDigit(cp);
        if (w && !in_word) ++n;
        in_word = w;
      }
      return Value::Int(n);
    };
    m["center"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("center", args, {"width"});
      CallArgs margs;
      margs.args = {a[0].is_undefined() ? Value::Int(80) : a[0]};
      Value out;
      CallMethod(Value::String(PyStr(v)), "center", margs, &out);
      return out;
    };
    m["format"] = [](Interpreter&, const Value& v, CallArgs& args) {
      if (!args.args.empty() && !args.kwargs.empty()) {
        Fail("can't handle positional and keyword arguments at the same time");
      }
      if (!args.kwargs.empty()) {
        Dict d;
        d.items = args.kwargs;
        return Value::String(PercentFormat(PyStr(v), Value::MakeDict(std::move(d))));
      }
      return Value::String(PercentFormat(PyStr(v), Value::Tuple(args.args)));
    };
    m["attr"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("attr", args, {"name"}, 1);
      return GetAttr(v, AttrName(a[0]));
    };
    m["min"] = [](Interpreter&, const Value& v, CallArgs& args) { return MinMax(v, args, false, "min"); };
    m["max"] = [](Interpreter&, const Value& v, CallArgs& args) { return MinMax(v, args, true, "max"); };
    m["sum"] = [](Interpreter&, const Value& v, CallArgs& args) {
      auto a = BindArgs("sum", args, {"attribute", "start"});
      std::string attr = a[0].is_undefined() || a[0].is_none() ? "" : AttrName(a[0]);
      Value total = a[1].is_undefined() ? Value::Int(0) : a[1];
      for (const Value& item : Iterate(v)) total = BinaryOp("+", total, attr.empty() ? item : AttrPath(item, attr));
      return total;
    };
    return m;
  }();
  return k;
}

}  // namespace

bool IsKnownFilter(const std::string& name) { return Filters().count(name) > 0; }

Value ApplyFilter(Interpreter& interp, const std::string& name, const Value& input, CallArgs& args) {
  auto it = Filters().find(name);
  if (it == Filters().end()) Fail("No filter named '" + name + "'.");
  return it->second(interp, input, args);
}

}  // namespace llmserve::jinja
