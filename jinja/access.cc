// Attribute and item access, slicing, iteration and len() with jinja2's rules:
// `a.b` tries the attribute (a method) before the item, `a['b']` the item
// before the attribute, and a missing one is Undefined (an error only when used).

#include <optional>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"
#include "jinja/unicode_util.h"

namespace llmserve::jinja {
namespace {

// `obj.name` where name is a method: calling it dispatches to CallMethod.
struct BoundMethod final : Callable {
  BoundMethod(Value self, std::string name) : self(std::move(self)), name(std::move(name)) {}
  Value Call(Interpreter&, CallArgs& args) const override {
    Value out;
    if (!CallMethod(self, name, args, &out)) Fail("'" + std::string(TypeName(self)) + "' object has no attribute '" + name + "'");
    return out;
  }
  std::string Name() const override { return std::string(TypeName(self)) + "." + name; }
  Value self;
  std::string name;
};

Value MissingAttribute(const Value& obj, const std::string& name) {
  return Value::Undefined(Cat({"'", TypeName(obj), " object' has no attribute '", name, "'"}));
}

Value MissingItem(const Value& obj, const Value& key) {
  return Value::Undefined(Cat({"'", TypeName(obj), " object' has no element ", PyRepr(key)}));
}

Value LoopAttribute(const LoopState& loop, const std::string& name) {
  const auto& items = *loop.items;
  int64_t n = static_cast<int64_t>(items.size());
  int64_t i = static_cast<int64_t>(loop.index0);
  if (name == "index") return Value::Int(i + 1);
  if (name == "index0") return Value::Int(i);
  if (name == "revindex") return Value::Int(n - i);
  if (name == "revindex0") return Value::Int(n - i - 1);
  if (name == "first") return Value::Bool(i == 0);
  if (name == "last") return Value::Bool(i == n - 1);
  if (name == "length") return Value::Int(n);
  if (name == "depth") return Value::Int(loop.depth0 + 1);
  if (name == "depth0") return Value::Int(loop.depth0);
  if (name == "previtem") return i > 0 ? items[static_cast<size_t>(i - 1)] : Value::Undefined("there is no previous item");
  if (name == "nextitem") return i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::Undefined("there is no next item");
  return Value::Undefined("'LoopContext object' has no attribute '" + name + "'");
}

// Python index normalisation; returns false when out of range.
bool NormalizeIndex(int64_t* i, int64_t n) {
  if (*i < 0) *i += n;
  return *i >= 0 && *i < n;
}

}  // namespace

Value GetAttr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined: Fail(obj.undefined_hint());
    case Value::Kind::kDict: {
      if (HasMethod(obj, name)) return Value::MakeCallable(std::make_shared<BoundMethod>(obj, name));
      const Value* v = obj.dict().Find(name);
      return v ? *v : MissingAttribute(obj, name);
    }
    case Value::Kind::kNamespace: {
      const Value* v = obj.ns().attrs.Find(name);
      return v ? *v : MissingAttribute(obj, name);
    }
    case Value::Kind::kLoop:
      if (name == "cycle") return Value::MakeCallable(std::make_shared<BoundMethod>(obj, name));
      return LoopAttribute(obj.loop(), name);
    default:
      if (HasMethod(obj, name)) return Value::MakeCallable(std::make_shared<BoundMethod>(obj, name));
      return MissingAttribute(obj, name);
  }
}

Value GetItem(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined: Fail(obj.undefined_hint());
    case Value::Kind::kDict: {
      if (key.is_string()) {
        const Value* v = obj.dict().Find(key.str());
        if (v) return *v;
        if (HasMethod(obj, key.str())) return GetAttr(obj, key.str());
      }
      return Value::Undefined(Cat({"'", TypeName(obj), " object' has no attribute ", PyRepr(key)}));
    }
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      if (key.is_int() || key.is_bool()) {
        int64_t i = key.as_int();
        if (NormalizeIndex(&i, static_cast<int64_t>(obj.items().size()))) return obj.items()[static_cast<size_t>(i)];
        return MissingItem(obj, key);
      }
      break;
    case Value::Kind::kString:
      if (key.is_int() || key.is_bool()) {
        int64_t i = key.as_int();
        const std::string& s = obj.str();
        if (IsAscii(s)) {
          if (NormalizeIndex(&i, static_cast<int64_t>(s.size()))) return Value::String(s.substr(static_cast<size_t>(i), 1));
        } else {
          std::u32string cps = ToCodePoints(s);
          if (NormalizeIndex(&i, static_cast<int64_t>(cps.size()))) {
            return Value::String(FromCodePoints(cps.substr(static_cast<size_t>(i), 1)));
          }
        }
        return MissingItem(obj, key);
      }
      break;
    case Value::Kind::kNamespace:
    case Value::Kind::kLoop:
      break;
    default:
      break;
  }
  if (key.is_string()) return GetAttr(obj, key.str());
  return MissingItem(obj, key);
}

Value Slice(const Value& obj, const Value* start_v, const Value* stop_v, const Value* step_v) {
  RequireDefined(obj);
  auto as_index = [](const Value* v, const char* what) -> std::optional<int64_t> {
    if (!v || v->is_none()) return std::nullopt;
    if (!v->is_int() && !v->is_bool()) {
      Fail(std::string("slice ") + what + " must be an integer or None, not " + TypeName(*v));
    }
    return v->as_int();
  };
  std::optional<int64_t> start = as_index(start_v, "start"), stop = as_index(stop_v, "stop");
  int64_t step = as_index(step_v, "step").value_or(1);
  if (step == 0) Fail("slice step cannot be zero");
  std::u32string cps;
  bool is_str = obj.is_string();
  bool ascii = is_str && IsAscii(obj.str());
  int64_t n;
  if (is_str) {
    if (!ascii) cps = ToCodePoints(obj.str());
    n = static_cast<int64_t>(ascii ? obj.str().size() : cps.size());
  } else if (obj.is_sequence()) {
    n = static_cast<int64_t>(obj.items().size());
  } else {
    Fail(std::string("'") + TypeName(obj) + "' object is not subscriptable");
  }
  // Python's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  int64_t lo = adjust(start, step < 0 ? n - 1 : 0);
  int64_t hi = adjust(stop, step < 0 ? -1 : n);
  std::vector<size_t> picks;
  if (step > 0) {
    for (int64_t i = lo; i < hi; i += step) picks.push_back(static_cast<size_t>(i));
  } else {
    for (int64_t i = lo; i > hi; i += step) picks.push_back(static_cast<size_t>(i));
  }
  if (is_str) {
    std::string out;
    if (ascii) {
      for (size_t i : picks) out += obj.str()[i];
    } else {
      for (size_t i : picks) AppendUtf8(cps[i], &out);
    }
    return Value::String(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(picks.size());
  for (size_t i : picks) out.push_back(obj.items()[i]);
  return obj.kind() == Value::Kind::kTuple ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

std::vector<Value> Iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList:
    case Value::Kind::kTuple: return v.items();
    case Value::Kind::kDict: {
      std::vector<Value> keys;
      keys.reserve(v.dict().items.size());
      for (const auto& kv : v.dict().items) keys.push_back(Value::String(kv.first));
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      for (char32_t cp : ToCodePoints(v.str())) {
        std::string c;
        AppendUtf8(cp, &c);
        chars.push_back(Value::String(std::move(c)));
      }
      return chars;
    }
    default:
      Fail(std::string("'") + TypeName(v) + "' object is not iterable");
  }
}

int64_t Length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(CountCodePoints(v.str()));
    case Value::Kind::kList:
    case Value::Kind::kTuple: return static_cast<int64_t>(v.items().size());
    case Value::Kind::kDict: return static_cast<int64_t>(v.dict().items.size());
    case Value::Kind::kLoop: return static_cast<int64_t>(v.loop().items->size());
    default: Fail(std::string("object of type '") + TypeName(v) + "' has no len()");
  }
}

}  // namespace llmserve::jinja
