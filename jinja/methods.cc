// Methods templates call on values: dict.get/items/keys/values,
// list.index/count, loop.cycle, and the str methods (str_methods.cc).
// Mutating list/dict methods fail as in jinja2's
// ImmutableSandboxedEnvironment, which is what Hugging Face renders with.

#include <string_view>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {
namespace {

// Linear scan: these sets are small and most lookups fail on the length.
bool In(const std::vector<std::string_view>& set, std::string_view name) {
  for (std::string_view s : set) {
    if (s.size() == name.size() && s == name) return true;
  }
  return false;
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

[[noreturn]] void Unsafe(const Value& self, const std::string& name) {
  Fail("access to attribute '" + name + "' of '" + TypeName(self) + "' object is unsafe.");
}

}  // namespace

bool HasMethod(const Value& self, const std::string& name) {
  switch (self.kind()) {
    case Value::Kind::kString: return IsStrMethod(name);
    case Value::Kind::kDict: return In(DictMethods(), name) || In(DictUnsafe(), name);
    case Value::Kind::kList: return In(ListMethods(), name) || In(ListUnsafe(), name);
    case Value::Kind::kTuple: return name == "index" || name == "count";
    default: return false;
  }
}

bool CallMethod(const Value& self, const std::string& name, CallArgs& args, Value* out) {
  switch (self.kind()) {
    case Value::Kind::kString:
      return CallStrMethod(self.str(), name, args, out);
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
