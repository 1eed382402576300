// Filters on whole sequences and mappings: length, first, last, list, items,
// sort, dictsort, unique, reverse, batch, join, min, max, sum.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/filter_table.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

// The `attribute=` argument at `v`, or "" when absent or none.
std::string OptionalAttr(const Value& v) { return v.is_undefined() || v.is_none() ? "" : AttrName(v); }

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
  std::string attr = OptionalAttr(a[1]);
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

Value LengthFilter(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("length", args, {});
  return Value::Int(Length(v));
}

Value Items(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("items", args, {});
  if (v.is_undefined()) return Value::List({});
  if (!v.is_dict()) Fail("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& [k, x] : v.dict().items) out.push_back(Value::Tuple({Value::String(k), x}));
  return Value::List(std::move(out));
}

Value Join(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("join", args, {"d", "attribute"});
  std::string sep = a[0].is_undefined() ? "" : PyStr(a[0]);
  std::string attr = OptionalAttr(a[1]);
  std::string out;
  bool first = true;
  for (const Value& item : Iterate(v)) {
    if (!first) out += sep;
    out += PyStr(attr.empty() ? item : AttrPath(item, attr));
    first = false;
  }
  return Value::String(std::move(out));
}

Value First(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("first", args, {});
  std::vector<Value> items = Iterate(v);
  return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
}

Value Last(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("last", args, {});
  std::vector<Value> items = Iterate(v);
  return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
}

Value ListFilter(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("list", args, {});
  return Value::List(Iterate(v));
}

Value Unique(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("unique", args, {"case_sensitive", "attribute"});
  std::string attr = OptionalAttr(a[1]);
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
}

Value Reverse(Interpreter&, const Value& v, CallArgs& args) {
  BindArgs("reverse", args, {});
  if (v.is_string()) {
    std::u32string cps = ToCodePoints(v.str());
    std::reverse(cps.begin(), cps.end());
    return Value::String(FromCodePoints(cps));
  }
  std::vector<Value> items = Iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

Value Sort(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("sort", args, {"reverse", "case_sensitive", "attribute"});
  std::string attr = OptionalAttr(a[2]);
  return Value::List(Sorted(Iterate(v), a[0].Truthy(), a[1].Truthy(), attr));
}

Value DictSort(Interpreter&, const Value& v, CallArgs& args) {
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
}

Value Batch(Interpreter&, const Value& v, CallArgs& args) {
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
}

Value Min(Interpreter&, const Value& v, CallArgs& args) { return MinMax(v, args, false, "min"); }

Value Max(Interpreter&, const Value& v, CallArgs& args) { return MinMax(v, args, true, "max"); }

Value Sum(Interpreter&, const Value& v, CallArgs& args) {
  auto a = BindArgs("sum", args, {"attribute", "start"});
  std::string attr = OptionalAttr(a[0]);
  Value total = a[1].is_undefined() ? Value::Int(0) : a[1];
  for (const Value& item : Iterate(v)) total = BinaryOp("+", total, attr.empty() ? item : AttrPath(item, attr));
  return total;
}

}  // namespace

void AddSequenceFilters(FilterTable* table) {
  table->insert({
      {"length", LengthFilter},
      {"count", LengthFilter},
      {"items", Items},
      {"join", Join},
      {"first", First},
      {"last", Last},
      {"list", ListFilter},
      {"unique", Unique},
      {"reverse", Reverse},
      {"sort", Sort},
      {"dictsort", DictSort},
      {"batch", Batch},
      {"min", Min},
      {"max", Max},
      {"sum", Sum},
  });
}

}  // namespace llmserve::jinja
