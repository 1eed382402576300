// jinja2's built-in tests (`x is defined`, `x is string`, `x is equalto y`...).

#include <functional>
#include <map>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

using TestFn = std::function<bool(const Value&, CallArgs&)>;

const Value& Arg(CallArgs& args, const char* test) {
  auto a = BindArgs(test, args, {"other"}, 1);
  args.args = {a[0]};
  args.kwargs.clear();
  return args.args[0];
}

void NoArgs(CallArgs& args, const char* test) { BindArgs(test, args, {}); }

const std::map<std::string, TestFn>& Tests() {
  static const std::map<std::string, TestFn> k = [] {
    std::map<std::string, TestFn> m;
    using K = Value::Kind;
    m["defined"] = [](const Value& v, CallArgs& a) { NoArgs(a, "defined"); return !v.is_undefined(); };
    m["undefined"] = [](const Value& v, CallArgs& a) { NoArgs(a, "undefined"); return v.is_undefined(); };
    m["none"] = [](const Value& v, CallArgs& a) { NoArgs(a, "none"); return v.is_none(); };
    m["string"] = [](const Value& v, CallArgs& a) { NoArgs(a, "string"); return v.is_string(); };
    m["mapping"] = [](const Value& v, CallArgs& a) { NoArgs(a, "mapping"); return v.is_dict(); };
    m["sequence"] = [](const Value& v, CallArgs& a) {
      NoArgs(a, "sequence");
      return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined();
    };
    m["iterable"] = [](const Value& v, CallArgs& a) {
      NoArgs(a, "iterable");
      return v.is_string() || v.is_sequence() || v.is_dict() || v.is_undefined();
    };
    m["number"] = [](const Value& v, CallArgs& a) { NoArgs(a, "number"); return v.is_number(); };
    m["integer"] = [](const Value& v, CallArgs& a) { NoArgs(a, "integer"); return v.is_int(); };
    m["float"] = [](const Value& v, CallArgs& a) { NoArgs(a, "float"); return v.is_float(); };
    m["boolean"] = [](const Value& v, CallArgs& a) { NoArgs(a, "boolean"); return v.is_bool(); };
    m["true"] = [](const Value& v, CallArgs& a) { NoArgs(a, "true"); return v.is_bool() && v.as_bool(); };
    m["false"] = [](const Value& v, CallArgs& a) { NoArgs(a, "false"); return v.is_bool() && !v.as_bool(); };
    m["callable"] = [](const Value& v, CallArgs& a) { NoArgs(a, "callable"); return v.kind() == K::kCallable; };
    m["odd"] = [](const Value& v, CallArgs& a) {
      NoArgs(a, "odd");
      if (!v.is_int() && !v.is_bool()) Fail("odd test expects an integer");
      return (v.as_int() % 2) != 0;
    };
    m["even"] = [](const Value& v, CallArgs& a) {
      NoArgs(a, "even");
      if (!v.is_int() && !v.is_bool()) Fail("even test expects an integer");
      return (v.as_int() % 2) == 0;
    };
    m["divisibleby"] = [](const Value& v, CallArgs& a) {
      const Value& n = Arg(a, "divisibleby");
      return BinaryOp("%", v, n).as_double() == 0;
    };
    m["eq"] = m["equalto"] = m["=="] = [](const Value& v, CallArgs& a) { return Equals(v, Arg(a, "eq")); };
    m["ne"] = m["!="] = [](const Value& v, CallArgs& a) { return !Equals(v, Arg(a, "ne")); };
    m["lt"] = m["lessthan"] = m["<"] = [](const Value& v, CallArgs& a) { return Less(v, Arg(a, "lt")); };
    m["gt"] = m["greaterthan"] = m[">"] = [](const Value& v, CallArgs& a) { return Less(Arg(a, "gt"), v); };
    m["le"] = m["<="] = [](const Value& v, CallArgs& a) { return !Less(Arg(a, "le"), v); };
    m["ge"] = m[">="] = [](const Value& v, CallArgs& a) { return !Less(v, Arg(a, "ge")); };
    m["in"] = [](const Value& v, CallArgs& a) { return Contains(Arg(a, "in"), v); };
    m["sameas"] = [](const Value& v, CallArgs& a) {
      const Value& o = Arg(a, "sameas");
      if (v.kind() != o.kind()) return false;
      if (v.is_none() || v.is_undefined()) return true;
      if (v.is_bool()) return v.as_bool() == o.as_bool();
      return v.identity() != nullptr && v.identity() == o.identity();
    };
    m["lower"] = [](const Value& v, CallArgs& a) {
      NoArgs(a, "lower");
      CallArgs none;
      Value out;
      CallMethod(Value::String(v.is_string() ? v.str() : ""), "islower", none, &out);
      return out.as_bool();
    };
    m["upper"] = [](const Value& v, CallArgs& a) {
      NoArgs(a, "upper");
      CallArgs none;
      Value out;
      CallMethod(Value::String(v.is_string() ? v.str() : ""), "isupper", none, &out);
      return out.as_bool();
    };
    m["escaped"] = [](const Value&, CallArgs& a) { NoArgs(a, "escaped"); return false; };
    m["filter"] = [](const Value& v, CallArgs& a) { NoArgs(a, "filter"); return v.is_string() && IsKnownFilter(v.str()); };
    m["test"] = [](const Value& v, CallArgs& a) { NoArgs(a, "test"); return v.is_string() && IsKnownTest(v.str()); };
    return m;
  }();
  return k;
}

}  // namespace

bool IsKnownTest(const std::string& name) { return Tests().count(name) > 0; }

bool ApplyTest(Interpreter&, const std::string& name, const Value& input, CallArgs& args) {
  auto it = Tests().find(name);
  if (it == Tests().end()) Fail("No test named '" + name + "'.");
  return it->second(input, args);
}

}  // namespace llmserve::jinja
