// Python operator semantics over Value: numeric tower (bool < int < float),
// str/list concatenation and repetition, floor division and modulo with
// Python's signs, rich comparison and `in`.

#include <cmath>
#include <limits>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {
namespace {

constexpr size_t kMaxStringBytes = size_t{1} << 28;  // 256 MiB: a runaway template is an error

[[noreturn]] void Unsupported(const std::string& op, const Value& a, const Value& b) {
  Fail("unsupported operand type(s) for " + op + ": '" + TypeName(a) + "' and '" + TypeName(b) + "'");
}

bool BothInts(const Value& a, const Value& b) {
  return (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool());
}

Value Repeat(const Value& seq, int64_t n) {
  if (n <= 0) return seq.is_string() ? Value::String("") : seq.kind() == Value::Kind::kTuple ? Value::Tuple({}) : Value::List({});
  if (seq.is_string()) {
    if (seq.str().size() * static_cast<uint64_t>(n) > kMaxStringBytes) Fail("string repetition result is too large");
    std::string out;
    out.reserve(seq.str().size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return Value::String(std::move(out));
  }
  if (seq.items().size() * static_cast<uint64_t>(n) > (kMaxStringBytes >> 4)) Fail("list repetition result is too large");
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return seq.kind() == Value::Kind::kTuple ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

double FloorMod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

}  // namespace

void RequireDefined(const Value& v) {
  if (v.is_undefined()) Fail(v.undefined_hint());
}

Value BinaryOp(const std::string& op, const Value& a, const Value& b) {
  RequireDefined(a);
  RequireDefined(b);
  if (op.size() == 1 && op[0] == '+' && a.is_string() && b.is_string()) {  // the common case first
    if (a.str().size() + b.str().size() > kMaxStringBytes) Fail("string concatenation result is too large");
    std::string out;
    out.reserve(a.str().size() + b.str().size());
    out += a.str();
    out += b.str();
    return Value::String(std::move(out));
  }
  if (op == "+") {
    if (BothInts(a, b)) {
      int64_t r;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) return Value::Float(a.as_double() + b.as_double());
      return Value::Int(r);
    }
    if (a.is_number() && b.is_number()) return Value::Float(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      if (a.str().size() + b.str().size() > kMaxStringBytes) Fail("string concatenation result is too large");
      return Value::String(a.str() + b.str());
    }
    if (a.is_sequence() && a.kind() == b.kind()) {
      std::vector<Value> out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a.kind() == Value::Kind::kTuple ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
    }
    if (a.is_string()) Fail(std::string("can only concatenate str (not \"") + TypeName(b) + "\") to str");
    if (a.kind() == Value::Kind::kList) Fail(std::string("can only concatenate list (not \"") + TypeName(b) + "\") to list");
    Unsupported("+", a, b);
  }
  if (op == "-") {
    if (BothInts(a, b)) {
      int64_t r;
      if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) return Value::Float(a.as_double() - b.as_double());
      return Value::Int(r);
    }
    if (a.is_number() && b.is_number()) return Value::Float(a.as_double() - b.as_double());
    Unsupported("-", a, b);
  }
  if (op == "*") {
    if (BothInts(a, b)) {
      int64_t r;
      if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) return Value::Float(a.as_double() * b.as_double());
      return Value::Int(r);
    }
    if (a.is_number() && b.is_number()) return Value::Float(a.as_double() * b.as_double());
    if ((a.is_string() || a.is_sequence()) && (b.is_int() || b.is_bool())) return Repeat(a, b.as_int());
    if ((b.is_string() || b.is_sequence()) && (a.is_int() || a.is_bool())) return Repeat(b, a.as_int());
    Unsupported("*", a, b);
  }
  if (op == "/") {
    if (!a.is_number() || !b.is_number()) Unsupported("/", a, b);
    if (b.as_double() == 0) Fail("division by zero");
    return Value::Float(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (op == "%" && a.is_string()) return Value::String(PercentFormat(a.str(), b));
    if (!a.is_number() || !b.is_number()) Unsupported(op, a, b);
    if (BothInts(a, b)) {
      int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) Fail(op == "//" ? "integer division or modulo by zero" : "integer modulo by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return Value::Float(-static_cast<double>(x));
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        --q;
        r += y;
      }
      return Value::Int(op == "//" ? q : r);
    }
    double x = a.as_double(), y = b.as_double();
    if (y == 0) Fail("float division by zero");
    double m = FloorMod(x, y);
    if (op == "%") return Value::Float(m);
    double d = (x - m) / y;
    double f = std::floor(d);
    if (d - f > 0.5) f += 1;
    return Value::Float(f);
  }
  if (op == "**") {
    if (!a.is_number() || !b.is_number()) Unsupported("** or pow()", a, b);
    if (BothInts(a, b) && b.as_int() >= 0) {
      int64_t base = a.as_int(), e = b.as_int(), r = 1;
      bool overflow = false;
      while (e > 0 && !overflow) {
        if (e & 1) overflow |= __builtin_mul_overflow(r, base, &r);
        e >>= 1;
        if (e > 0) overflow |= __builtin_mul_overflow(base, base, &base);
      }
      if (!overflow) return Value::Int(r);
      return Value::Float(std::pow(a.as_double(), b.as_double()));
    }
    if (a.as_double() == 0 && b.as_double() < 0) Fail("0.0 cannot be raised to a negative power");
    return Value::Float(std::pow(a.as_double(), b.as_double()));
  }
  Fail("unknown operator '" + op + "'");
}

Value Negate(const Value& v) {
  RequireDefined(v);
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == std::numeric_limits<int64_t>::min()) return Value::Float(-v.as_double());
    return Value::Int(-v.as_int());
  }
  if (v.is_float()) return Value::Float(-v.as_double());
  Fail(std::string("bad operand type for unary -: '") + TypeName(v) + "'");
}

bool Equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (BothInts(a, b)) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.str() == b.str();
    case Value::Kind::kList:
    case Value::Kind::kTuple: {
      if (a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i) {
        if (!Equals(a.items()[i], b.items()[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const auto& x = a.dict().items;
      if (x.size() != b.dict().items.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* other = b.dict().Find(k);
        if (!other || !Equals(v, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

bool Less(const Value& a, const Value& b) {
  RequireDefined(a);
  RequireDefined(b);
  if (a.is_number() && b.is_number()) {
    if (BothInts(a, b)) return a.as_int() < b.as_int();
    return a.as_double() < b.as_double();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();  // UTF-8 byte order == code point order
  if (a.is_sequence() && a.kind() == b.kind()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!Equals(x[i], y[i])) return Less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  Fail(std::string("'<' not supported between instances of '") + TypeName(a) + "' and '" + TypeName(b) + "'");
}

bool Contains(const Value& haystack, const Value& needle) {
  switch (haystack.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!needle.is_string()) {
        Fail(std::string("'in <string>' requires string as left operand, not ") + TypeName(needle));
      }
      return haystack.str().find(needle.str()) != std::string::npos;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      for (const Value& v : haystack.items()) {
        if (Equals(v, needle)) return true;
      }
      return false;
    case Value::Kind::kDict:
      return needle.is_string() && haystack.dict().Find(needle.str()) != nullptr;
    default:
      Fail(std::string("argument of type '") + TypeName(haystack) + "' is not iterable");
  }
}

}  // namespace llmserve::jinja
