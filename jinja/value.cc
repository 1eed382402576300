#include "jinja/value.h"

#include "jinja/callable.h"

namespace llmserve::jinja {

const Value* Dict::Find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value Value::Undefined(std::string hint) {
  if (hint.empty()) return Value();
  return Value(Kind::kUndefined, std::make_shared<std::string>(std::move(hint)));
}
Value Value::None() { return Value(Kind::kNone, nullptr); }
Value Value::Bool(bool b) {
  Value v(Kind::kBool, nullptr);
  v.num_.i = b ? 1 : 0;
  return v;
}
Value Value::Int(int64_t i) {
  Value v(Kind::kInt, nullptr);
  v.num_.i = i;
  return v;
}
Value Value::Float(double d) {
  Value v(Kind::kFloat, nullptr);
  v.num_.d = d;
  return v;
}
Value Value::String(std::string s) { return Value(Kind::kString, std::make_shared<std::string>(std::move(s))); }
Value Value::List(std::vector<Value> items) {
  return Value(Kind::kList, std::make_shared<std::vector<Value>>(std::move(items)));
}
Value Value::Tuple(std::vector<Value> items) {
  return Value(Kind::kTuple, std::make_shared<std::vector<Value>>(std::move(items)));
}
Value Value::MakeDict(Dict dict) { return Value(Kind::kDict, std::make_shared<Dict>(std::move(dict))); }
Value Value::MakeNamespace(std::shared_ptr<Namespace> ns) { return Value(Kind::kNamespace, std::move(ns)); }
Value Value::MakeCallable(std::shared_ptr<const Callable> fn) {
  return Value(Kind::kCallable, std::const_pointer_cast<Callable>(std::move(fn)));
}
Value Value::Loop(std::shared_ptr<const LoopState> loop) {
  return Value(Kind::kLoop, std::const_pointer_cast<LoopState>(std::move(loop)));
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool:
    case Kind::kInt: return num_.i != 0;
    case Kind::kFloat: return num_.d != 0.0;
    case Kind::kString: return !str().empty();
    case Kind::kList:
    case Kind::kTuple: return !items().empty();
    case Kind::kDict: return !dict().items.empty();
    case Kind::kNamespace:
    case Kind::kCallable:
    case Kind::kLoop: return true;
  }
  return false;
}

const char* TypeName(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return "Undefined";
    case Value::Kind::kNone: return "NoneType";
    case Value::Kind::kBool: return "bool";
    case Value::Kind::kInt: return "int";
    case Value::Kind::kFloat: return "float";
    case Value::Kind::kString: return "str";
    case Value::Kind::kList: return "list";
    case Value::Kind::kTuple: return "tuple";
    case Value::Kind::kDict: return "dict";
    case Value::Kind::kNamespace: return "Namespace";
    case Value::Kind::kCallable: return "function";
    case Value::Kind::kLoop: return "LoopContext";
  }
  return "object";
}

}  // namespace llmserve::jinja
