// The filter registry: every family's filters in one table, and the helpers
// the families share. jinja2's filters as chat templates use them, with
// jinja2's argument names and defaults; filters that return generators in
// jinja2 (map, select, unique, reverse, batch...) return lists here.

#include <cstdlib>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/filter_table.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

const FilterTable& Filters() {
  static const FilterTable table = [] {
    FilterTable t;
    AddTextFilters(&t);
    AddNumberFilters(&t);
    AddSequenceFilters(&t);
    AddItemFilters(&t);
    return t;
  }();
  return table;
}

}  // namespace

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

Value SortKey(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(StrLower(v.str()));
  return v;
}

bool IsKnownFilter(const std::string& name) { return Filters().count(name) > 0; }

Value ApplyFilter(Interpreter& interp, const std::string& name, const Value& input, CallArgs& args) {
  auto it = Filters().find(name);
  if (it == Filters().end()) Fail("No filter named '" + name + "'.");
  return it->second(interp, input, args);
}

}  // namespace llmserve::jinja
