// Global functions: jinja2's range/namespace/dict, Hugging Face's
// raise_exception and strftime_now; and the argument binder the built-ins share.

#include <ctime>
#include <map>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {

std::vector<Value> BindArgs(const char* function, CallArgs& args, const std::vector<const char*>& names,
                            size_t required) {
  std::vector<Value> out(names.size());
  std::vector<bool> set(names.size(), false);
  if (args.args.size() > names.size()) {
    Fail(std::string(function) + "() takes at most " + std::to_string(names.size()) + " argument(s) (" +
         std::to_string(args.args.size()) + " given)");
  }
  for (size_t i = 0; i < args.args.size(); ++i) {
    out[i] = args.args[i];
    set[i] = true;
  }
  for (const auto& [key, v] : args.kwargs) {
    size_t i = 0;
    while (i < names.size() && key != names[i]) ++i;
    if (i == names.size()) Fail(std::string(function) + "() got an unexpected keyword argument '" + key + "'");
    if (set[i]) Fail(std::string(function) + "() got multiple values for argument '" + key + "'");
    out[i] = v;
    set[i] = true;
  }
  for (size_t i = 0; i < required; ++i) {
    if (!set[i]) Fail(std::string(function) + "() missing required argument '" + names[i] + "'");
  }
  return out;
}

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2's sandbox limit (MAX_RANGE)

struct Builtin final : Callable {
  using Fn = Value (*)(Interpreter&, CallArgs&);
  Builtin(std::string name, Fn fn) : name(std::move(name)), fn(fn) {}
  Value Call(Interpreter& interp, CallArgs& args) const override { return fn(interp, args); }
  std::string Name() const override { return name; }
  std::string name;
  Fn fn;
};

Value Range(Interpreter&, CallArgs& args) {
  if (!args.kwargs.empty()) Fail("range() takes no keyword arguments");
  if (args.args.empty() || args.args.size() > 3) Fail("range expected 1 to 3 arguments");
  for (const Value& v : args.args) {
    if (!v.is_int() && !v.is_bool()) Fail(std::string("'") + TypeName(v) + "' object cannot be interpreted as an integer");
  }
  int64_t start = 0, stop, step = 1;
  if (args.args.size() == 1) {
    stop = args.args[0].as_int();
  } else {
    start = args.args[0].as_int();
    stop = args.args[1].as_int();
    if (args.args.size() == 3) step = args.args[2].as_int();
  }
  if (step == 0) Fail("range() arg 3 must not be zero");
  __int128 span = step > 0 ? (__int128)stop - start : (__int128)start - stop;
  __int128 astep = step > 0 ? step : -(__int128)step;
  __int128 count = span <= 0 ? 0 : (span + astep - 1) / astep;
  if (count > kMaxRange) {
    Fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (" + std::to_string(kMaxRange) + ").");
  }
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(count));
  for (__int128 i = 0; i < count; ++i) out.push_back(Value::Int(static_cast<int64_t>(start + i * step)));
  return Value::List(std::move(out));
}

Value MakeNs(Interpreter& interp, CallArgs& args) {
  auto ns = std::make_shared<Namespace>();
  interp.TrackNamespace(ns);
  if (args.args.size() > 1) Fail("namespace() takes at most one positional argument");
  if (!args.args.empty()) {
    if (!args.args[0].is_dict()) Fail("namespace() positional argument must be a mapping");
    ns->attrs = args.args[0].dict();
  }
  for (auto& [k, v] : args.kwargs) {
    bool replaced = false;
    for (auto& kv : ns->attrs.items) {
      if (kv.first == k) {
        kv.second = v;
        replaced = true;
      }
    }
    if (!replaced) ns->attrs.items.emplace_back(k, v);
  }
  return Value::MakeNamespace(std::move(ns));
}

Value MakeDictFn(Interpreter&, CallArgs& args) {
  Dict d;
  if (args.args.size() > 1) Fail("dict expected at most 1 argument");
  if (!args.args.empty()) {
    if (!args.args[0].is_dict()) Fail("dict() positional argument must be a mapping");
    d = args.args[0].dict();
  }
  for (auto& [k, v] : args.kwargs) d.items.emplace_back(k, v);
  return Value::MakeDict(std::move(d));
}

Value RaiseException(Interpreter&, CallArgs& args) {
  auto a = BindArgs("raise_exception", args, {"message"}, 1);
  TemplateError e{PyStr(a[0])};
  e.raised = true;
  throw e;
}

Value StrftimeNow(Interpreter& interp, CallArgs& args) {
  auto a = BindArgs("strftime_now", args, {"format"}, 1);
  if (!a[0].is_string()) Fail("strftime() argument 1 must be str");
  std::tm tm = interp.Now();
  std::string fmt = a[0].str();
  if (fmt.empty()) return Value::String("");
  std::string buf(256 + fmt.size() * 16, '\0');
  size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &tm);
  buf.resize(n);
  return Value::String(buf);
}

}  // namespace

Value LookupGlobal(const std::string& name) {
  static const std::map<std::string, Value> k = [] {
    std::map<std::string, Value> m;
    auto add = [&](const char* n, Builtin::Fn fn) { m[n] = Value::MakeCallable(std::make_shared<Builtin>(n, fn)); };
    add("range", Range);
    add("namespace", MakeNs);
    add("dict", MakeDictFn);
    add("raise_exception", RaiseException);
    add("strftime_now", StrftimeNow);
    return m;
  }();
  auto it = k.find(name);
  if (it == k.end()) return Value::Undefined("'" + name + "' is undefined");
  return it->second;
}

}  // namespace llmserve::jinja
