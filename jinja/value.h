#pragma once
// Value: what a Jinja expression evaluates to. It models the Python objects
// that Hugging Face chat templates see (str, int, float, bool, None, list,
// tuple, dict, jinja2's Undefined and Namespace, loop objects, callables).
// Lists and dicts are immutable once built (HF renders in jinja2's
// ImmutableSandboxedEnvironment, where list.append and dict.update are
// forbidden), so they are shared by pointer and copying a Value is cheap.
// Only Namespace objects are mutable (`{% set ns.x = ... %}`).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmserve::jinja {

class Value;
struct Callable;
struct LoopState;

// A Python dict: insertion-ordered string keys.
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  // The value under `key`, or nullptr.
  const Value* Find(std::string_view key) const;
};

// A jinja2 Namespace: a mutable attribute bag.
struct Namespace {
  Dict attrs;
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict,
                    kNamespace, kCallable, kLoop };

  // Undefined, with no hint attached.
  Value() = default;
  // Undefined; `hint` says why, as jinja2's UndefinedError would ("'x' is undefined").
  static Value Undefined(std::string hint = {});
  static Value None();
  static Value Bool(bool b);
  static Value Int(int64_t i);
  static Value Float(double d);
  static Value String(std::string s);
  static Value List(std::vector<Value> items);
  static Value Tuple(std::vector<Value> items);
  static Value MakeDict(Dict dict);
  static Value MakeNamespace(std::shared_ptr<Namespace> ns);
  static Value MakeCallable(std::shared_ptr<const Callable> fn);
  static Value Loop(std::shared_ptr<const LoopState> loop);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // int, float or bool (Python's bool is an int).
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  // list or tuple.
  bool is_sequence() const { return kind_ == Kind::kList || kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }

  bool as_bool() const { return num_.i != 0; }
  // The integer value of an int or bool.
  int64_t as_int() const { return num_.i; }
  // The numeric value of an int, float or bool as a double.
  double as_double() const { return kind_ == Kind::kFloat ? num_.d : static_cast<double>(num_.i); }
  const std::string& str() const { return *static_cast<const std::string*>(ptr_.get()); }
  const std::vector<Value>& items() const { return *static_cast<const std::vector<Value>*>(ptr_.get()); }
  const Dict& dict() const { return *static_cast<const Dict*>(ptr_.get()); }
  Namespace& ns() const { return *static_cast<Namespace*>(ptr_.get()); }
  const Callable& callable() const { return *static_cast<const Callable*>(ptr_.get()); }
  const LoopState& loop() const { return *static_cast<const LoopState*>(ptr_.get()); }
  // For an undefined value: why it is undefined ("'x' is undefined"), for errors.
  std::string undefined_hint() const { return ptr_ ? str() : std::string("value is undefined"); }
  // Identity of the shared payload (lists, dicts, namespaces), for `is sameas`.
  const void* identity() const { return ptr_.get(); }

  // Python truthiness.
  bool Truthy() const;

 private:
  Value(Kind kind, std::shared_ptr<void> ptr) : kind_(kind), ptr_(std::move(ptr)) {}
  Kind kind_ = Kind::kUndefined;
  union { int64_t i; double d; } num_{0};
  std::shared_ptr<void> ptr_;  // string, vector<Value>, Dict, Namespace, Callable or LoopState
};

// Python's name for a value's type, as jinja2 error messages use it.
const char* TypeName(const Value& v);

}  // namespace llmserve::jinja
