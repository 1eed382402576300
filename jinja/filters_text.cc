// Filters on strings, and Hugging Face's `tojson` (json.dumps with
// ensure_ascii=False and no HTML escaping).

#include <algorithm>
#include <string>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/filter_table.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

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

Value ToJsonFilter(Interpreter&, const Value& v, CallArgs& args) {
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
}

Value Trim(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("trim", args, {"chars"});
  std::string chars = a[0].is_string() ? a[0].str() : "";
  return Value::String(StripStr(PyStr(v), a[0].is_string() ? &chars : nullptr, true, true));
}

Value Upper(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("upper", args, {});
  return Value::String(StrUpper(PyStr(v)));
}

Value Lower(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("lower", args, {});
  return Value::String(StrLower(PyStr(v)));
}

Value TitleFilter(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("title", args, {});
  return Value::String(JinjaTitle(PyStr(v)));
}

Value CapitalizeFilter(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("capitalize", args, {});
  Value out;
  CallArgs none;
  CallMethod(Value::String(PyStr(v)), "capitalize", none, &out);
  return out;
}

Value ReplaceFilter(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("replace", args, {"old", "new", "count"}, 2);
  CallArgs margs;
  margs.args = {Value::String(PyStr(a[0])), Value::String(PyStr(a[1]))};
  if (!a[2].is_undefined() && !a[2].is_none()) margs.args.push_back(a[2]);
  Value out;
  CallMethod(Value::String(PyStr(v)), "replace", margs, &out);
  return out;
}

Value StringFilter(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("string", args, {});
  return v.is_string() ? v : Value::String(PyStr(v));
}

Value EscapeFilter(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("escape", args, {});
  return Value::String(Escape(PyStr(v)));
}

Value Indent(Interpreter&, const Value& v, CallArgs& args) {
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
}

Value WordCount(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("wordcount", args, {});
  int64_t n = 0;
  bool in_word = false;
  for (char32_t cp : ToCodePoints(PyStr(v))) {
    bool w = cp == '_' || IsAlpha(cp) || IsDigit(cp);
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::Int(n);
}

Value Center(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("center", args, {"width"});
  CallArgs margs;
  margs.args = {a[0].is_undefined() ? Value::Int(80) : a[0]};
  Value out;
  CallMethod(Value::String(PyStr(v)), "center", margs, &out);
  return out;
}

Value FormatFilter(Interpreter&, const Value& v, CallArgs& args) {
  if (!args.args.empty() && !args.kwargs.empty()) {
    Fail("can't handle positional and keyword arguments at the same time");
  }
  if (!args.kwargs.empty()) {
    Dict d;
    d.items = args.kwargs;
    return Value::String(PercentFormat(PyStr(v), Value::MakeDict(std::move(d))));
  }
  return Value::String(PercentFormat(PyStr(v), Value::Tuple(args.args)));
}

}  // namespace

void AddTextFilters(FilterTable* table) {
  table->insert({
      {"tojson", ToJsonFilter},
      {"trim", Trim},
      {"upper", Upper},
      {"lower", Lower},
      {"title", TitleFilter},
      {"capitalize", CapitalizeFilter},
      {"replace", ReplaceFilter},
      {"string", StringFilter},
      {"safe", StringFilter},
      {"escape", EscapeFilter},
      {"e", EscapeFilter},
      {"forceescape", EscapeFilter},
      {"indent", Indent},
      {"wordcount", WordCount},
      {"center", Center},
      {"format", FormatFilter},
  });
}

}  // namespace llmserve::jinja
