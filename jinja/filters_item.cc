// Filters that work item by item: select / reject (by a test),
// selectattr / rejectattr (by a test on an attribute), map (a filter or an
// attribute per item), attr, and default for undefined values.

#include <string>
#include <utility>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/filter_table.h"
#include "jinja/interpreter.h"

namespace llmserve::jinja {
namespace {

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

Value SelectAttr(Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, true, true); }

Value RejectAttr(Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, true, false); }

Value Select(Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, false, true); }

Value Reject(Interpreter& i, const Value& v, CallArgs& a) { return SelectImpl(i, v, a, false, false); }

Value Map(Interpreter& interp, const Value& v, CallArgs& args) {
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
}

Value Attr(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("attr", args, {"name"}, 1);
  return GetAttr(v, AttrName(a[0]));
}

Value Default(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("default", args, {"default_value", "boolean"});
  Value def = a[0].is_undefined() ? Value::String("") : a[0];
  if (v.is_undefined() || (a[1].Truthy() && !v.Truthy())) return def;
  return v;
}

}  // namespace

void AddItemFilters(FilterTable* table) {
  table->insert({
      {"selectattr", SelectAttr},
      {"rejectattr", RejectAttr},
      {"select", Select},
      {"reject", Reject},
      {"map", Map},
      {"attr", Attr},
      {"default", Default},
      {"d", Default},
  });
}

}  // namespace llmserve::jinja
