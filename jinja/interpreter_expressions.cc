// The interpreter's expressions: names, attribute and item access, calls,
// filters and tests, Python's operators, and list / tuple / dict displays.

#include <string>
#include <utility>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/interpreter.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {

void Interpreter::EvalArgs(const Expr& e, size_t first, CallArgs* args) {
  for (size_t i = first; i < e.operands.size(); ++i) args->args.push_back(Eval(*e.operands[i]));
  for (const auto& [k, x] : e.kwargs) args->kwargs.emplace_back(k, Eval(*x));
}

Value Interpreter::Eval(const Expr& e) {
  try {
    return EvalInner(e);
  } catch (TemplateError& err) {
    AddPosition(err, e.line, e.column);
    throw;
  }
}

Value Interpreter::EvalCall(const Expr& e) {
  const Expr& callee = *e.operands[0];
  if (callee.kind == Expr::Kind::kGetAttr) {
    Value obj = Eval(*callee.operands[0]);
    CallArgs args;
    EvalArgs(e, 1, &args);
    Value out;
    if ((HasMethod(obj, callee.name) || obj.kind() == Value::Kind::kLoop) && CallMethod(obj, callee.name, args, &out)) {
      return out;
    }
    Value fn = GetAttr(obj, callee.name);
    if (fn.kind() == Value::Kind::kCallable) return fn.callable().Call(*this, args);
    RequireDefined(fn);
    Fail(std::string("'") + TypeName(fn) + "' object is not callable");
  }
  Value fn = Eval(callee);
  CallArgs args;
  EvalArgs(e, 1, &args);
  if (fn.kind() == Value::Kind::kCallable) return fn.callable().Call(*this, args);
  RequireDefined(fn);
  Fail(std::string("'") + TypeName(fn) + "' object is not callable");
}

Value Interpreter::EvalInner(const Expr& e) {
  Tick();
  switch (e.kind) {
    case Expr::Kind::kConst:
      return e.constant;
    case Expr::Kind::kName: {
      const Value* v = scope_->Lookup(e.name);
      return v ? *v : LookupGlobal(e.name);
    }
    case Expr::Kind::kGetAttr:
      return GetAttr(Eval(*e.operands[0]), e.name);
    case Expr::Kind::kGetItem: {
      Value obj = Eval(*e.operands[0]);
      return GetItem(obj, Eval(*e.operands[1]));
    }
    case Expr::Kind::kSlice:
      return EvalSlice(e);
    case Expr::Kind::kCall:
      return EvalCall(e);
    case Expr::Kind::kFilter:
    case Expr::Kind::kTest:
      return EvalFilterOrTest(e);
    case Expr::Kind::kNeg:
      return Negate(Eval(*e.operands[0]));
    case Expr::Kind::kPos: {
      Value v = Eval(*e.operands[0]);
      RequireDefined(v);
      if (!v.is_number()) Fail(std::string("bad operand type for unary +: '") + TypeName(v) + "'");
      return v.is_bool() ? Value::Int(v.as_int()) : v;
    }
    case Expr::Kind::kNot:
      return Value::Bool(!Eval(*e.operands[0]).Truthy());
    case Expr::Kind::kBinary: {
      Value a = Eval(*e.operands[0]);
      Value b = Eval(*e.operands[1]);
      return BinaryOp(e.name, a, b);
    }
    case Expr::Kind::kConcat:
      return EvalConcat(e);
    case Expr::Kind::kCompare:
      return Value::Bool(EvalCompare(e));
    case Expr::Kind::kAnd: {
      Value a = Eval(*e.operands[0]);
      return a.Truthy() ? Eval(*e.operands[1]) : a;
    }
    case Expr::Kind::kOr: {
      Value a = Eval(*e.operands[0]);
      return a.Truthy() ? a : Eval(*e.operands[1]);
    }
    case Expr::Kind::kCond:
      if (Eval(*e.operands[0]).Truthy()) return Eval(*e.operands[1]);
      if (e.operands[2]) return Eval(*e.operands[2]);
      return Value::Undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    case Expr::Kind::kList:
    case Expr::Kind::kTuple:
    case Expr::Kind::kDict:
      return EvalDisplay(e);
  }
  Fail("unknown expression");
}

Value Interpreter::EvalSlice(const Expr& e) {
  Value obj = Eval(*e.operands[0]);
  Value parts[3];
  const Value* ptrs[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) {
    if (e.operands[static_cast<size_t>(i) + 1]) {
      parts[i] = Eval(*e.operands[static_cast<size_t>(i) + 1]);
      ptrs[i] = &parts[i];
    }
  }
  return Slice(obj, ptrs[0], ptrs[1], ptrs[2]);
}

Value Interpreter::EvalFilterOrTest(const Expr& e) {
  Value input = Eval(*e.operands[0]);
  CallArgs args;
  EvalArgs(e, 1, &args);
  if (e.kind == Expr::Kind::kFilter) return Filter(e.name, input, args);
  return Value::Bool(Test(e.name, input, args) != e.negated);
}

Value Interpreter::EvalConcat(const Expr& e) {
  std::string out;
  for (const auto& op : e.operands) {
    Value v = Eval(*op);
    if (v.is_string()) {
      out += v.str();
    } else {
      out += PyStr(v);
    }
  }
  return Value::String(std::move(out));
}

bool Interpreter::EvalCompare(const Expr& e) {
  Value left = Eval(*e.operands[0]);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = Eval(*e.operands[i + 1]);
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==") r = Equals(left, right);
    else if (op == "!=") r = !Equals(left, right);
    else if (op == "<") r = Less(left, right);
    else if (op == ">") r = Less(right, left);
    else if (op == "<=") r = Less(left, right) || Equals(left, right);
    else if (op == ">=") r = Less(right, left) || Equals(left, right);
    else if (op == "in") r = Contains(right, left);
    else r = !Contains(right, left);
    if (!r) return false;
    left = std::move(right);
  }
  return true;
}

Value Interpreter::EvalDisplay(const Expr& e) {
  if (e.kind != Expr::Kind::kDict) {
    std::vector<Value> items;
    items.reserve(e.operands.size());
    for (const auto& op : e.operands) items.push_back(Eval(*op));
    return e.kind == Expr::Kind::kList ? Value::List(std::move(items)) : Value::Tuple(std::move(items));
  }
  Dict d;
  for (size_t i = 0; i < e.operands.size(); ++i) {
    Value k = Eval(*e.dict_keys[i]);
    if (!k.is_string()) Fail("unsupported: dict literal keys must be strings");
    Value v = Eval(*e.operands[i]);
    bool replaced = false;
    for (auto& kv : d.items) {
      if (kv.first == k.str()) {
        kv.second = v;
        replaced = true;
      }
    }
    if (!replaced) d.items.emplace_back(k.str(), std::move(v));
  }
  return Value::MakeDict(std::move(d));
}

}  // namespace llmserve::jinja
