// The interpreter's statements: scopes, output, if / for / set, macros and
// call blocks, filter blocks. Expressions are in interpreter_expressions.cc.

#include "jinja/interpreter.h"

#include <chrono>

#include "jinja/builtins.h"
#include "jinja/error.h"
#include "jinja/py_format.h"

namespace llmserve::jinja {
namespace {

constexpr int kMaxMacroDepth = 100;
constexpr size_t kMaxOutputBytes = size_t{1} << 28;      // 256 MiB

// A macro (or the body of a {% call %} block, which is the `caller` macro).
// The defining scope is held weakly (the scope holds the macro, so a strong
// reference would be a cycle); the Interpreter keeps it alive for the render.
struct Macro final : Callable {
  Macro(const Stmt* def, std::weak_ptr<Frame> closure, Value caller)
      : def(def), closure(std::move(closure)), caller(std::move(caller)) {}
  Value Call(Interpreter& interp, CallArgs& args) const override {
    return Value::String(interp.RunMacro(*def, Scope(), args, caller));
  }
  std::string Name() const override { return def->kind == Stmt::Kind::kMacro ? def->text : "caller"; }
  std::shared_ptr<Frame> Scope() const {
    auto scope = closure.lock();
    if (!scope) Fail("macro '" + Name() + "' called after its render ended");
    return scope;
  }
  const Stmt* def;
  std::weak_ptr<Frame> closure;
  Value caller;
};

}  // namespace

const Value* Frame::Lookup(const std::string& name) const {
  for (const Frame* f = this; f; f = f->parent.get()) {
    for (auto it = f->vars.rbegin(); it != f->vars.rend(); ++it) {
      if (it->first == name) return &it->second;
    }
  }
  return nullptr;
}

void Frame::Set(const std::string& name, Value v) {
  for (auto& kv : vars) {
    if (kv.first == name) {
      kv.second = std::move(v);
      return;
    }
  }
  vars.emplace_back(name, std::move(v));
}

Interpreter::Interpreter(std::shared_ptr<Frame> globals, const RenderEnv* env)
    : scope_(std::move(globals)), env_(env) {}

Interpreter::~Interpreter() {
  // Namespaces may reference themselves (`{% set ns.me = ns %}`); empty them
  // so such cycles are freed with the render.
  for (const auto& ns : namespaces_) ns->attrs.items.clear();
}

void Interpreter::TrackNamespace(std::shared_ptr<Namespace> ns) { namespaces_.push_back(std::move(ns)); }

std::tm Interpreter::Now() const {
  if (env_ && env_->now) return env_->now();
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

std::string Interpreter::Render(const StmtList& body) {
  auto top = std::make_shared<Frame>();
  top->parent = scope_;
  scope_ = top;
  std::string out;
  out_ = &out;
  ExecList(body);
  return out;
}

void Interpreter::Tick() {
  if (++steps_ > env_->max_steps) Fail("template rendering exceeded its step budget");
}

std::string Interpreter::Capture(const StmtList& body) {
  std::string buf;
  std::string* saved = out_;
  out_ = &buf;
  ExecList(body);
  out_ = saved;
  return buf;
}

Interpreter::Flow Interpreter::ExecList(const StmtList& list) {
  for (const auto& s : list) {
    Flow f = Exec(*s);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::Exec(const Stmt& s) {
  Tick();
  try {
    switch (s.kind) {
      case Stmt::Kind::kData:
        out_->append(s.text);
        break;
      case Stmt::Kind::kOutput: {
        Value v = Eval(*s.expr);
        if (v.is_string()) {
          out_->append(v.str());
        } else {
          out_->append(PyStr(v));
        }
        break;
      }
      case Stmt::Kind::kIf:
        for (size_t i = 0; i < s.conditions.size(); ++i) {
          if (Eval(*s.conditions[i]).Truthy()) return ExecList(s.bodies[i]);
        }
        if (s.bodies.size() > s.conditions.size()) return ExecList(s.bodies.back());
        break;
      case Stmt::Kind::kFor:
        ExecFor(s);
        break;
      case Stmt::Kind::kSet:
        Assign(s.target, Eval(*s.expr));
        break;
      case Stmt::Kind::kSetBlock: {
        Value v = Value::String(Capture(s.bodies[0]));
        if (s.filter) v = FilterCaptured(*s.filter, std::move(v));
        Assign(s.target, v);
        break;
      }
      case Stmt::Kind::kFilterBlock:
        out_->append(PyStr(FilterCaptured(*s.filter, Value::String(Capture(s.bodies[0])))));
        break;
      case Stmt::Kind::kMacro:
        closures_.push_back(scope_);
        scope_->Set(s.text, Value::MakeCallable(std::make_shared<Macro>(&s, scope_, Value())));
        break;
      case Stmt::Kind::kCallBlock:
        ExecCallBlock(s);
        break;
      case Stmt::Kind::kScope:
        return ExecScope(s);
      case Stmt::Kind::kBreak:
        return Flow::kBreak;
      case Stmt::Kind::kContinue:
        return Flow::kContinue;
    }
  } catch (TemplateError& e) {
    AddPosition(e, s.line, s.column);
    throw;
  }
  if (out_->size() > kMaxOutputBytes) Fail("template output exceeds " + std::to_string(kMaxOutputBytes) + " bytes");
  return Flow::kNormal;
}

Value Interpreter::FilterCaptured(const Expr& filter, Value v) {
  // The filter chain's innermost operand is null: it filters the captured body.
  std::vector<const Expr*> chain;
  for (const Expr* f = &filter; f; f = f->operands[0].get()) chain.push_back(f);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    CallArgs args;
    EvalArgs(**it, 1, &args);
    v = Filter((*it)->name, v, args);
  }
  return v;
}

void Interpreter::ExecCallBlock(const Stmt& s) {
  closures_.push_back(scope_);
  Value caller = Value::MakeCallable(std::make_shared<Macro>(&s, scope_, Value()));
  const Expr& call = *s.expr;
  Value fn = Eval(*call.operands[0]);
  CallArgs args;
  EvalArgs(call, 1, &args);
  if (fn.kind() != Value::Kind::kCallable) Fail("{% call %} needs a macro to call");
  const auto* macro = dynamic_cast<const Macro*>(&fn.callable());
  if (macro) {
    out_->append(RunMacro(*macro->def, macro->Scope(), args, caller));
  } else {
    out_->append(PyStr(fn.callable().Call(*this, args)));
  }
}

Interpreter::Flow Interpreter::ExecScope(const Stmt& s) {
  auto frame = std::make_shared<Frame>();
  frame->parent = scope_;
  std::vector<Value> values;
  for (const auto& [target, expr] : s.assignments) values.push_back(Eval(*expr));
  auto saved = scope_;
  scope_ = frame;
  for (size_t i = 0; i < values.size(); ++i) Assign(s.assignments[i].first, values[i]);
  Flow f = ExecList(s.bodies[0]);
  scope_ = saved;
  return f;
}

void Interpreter::ExecFor(const Stmt& s) {
  Value iterable = Eval(*s.expr);
  if (iterable.is_none() || iterable.is_number()) {
    Fail(std::string("'") + TypeName(iterable) + "' object is not iterable");
  }
  std::vector<Value> all = Iterate(iterable);
  auto saved = scope_;
  if (s.filter) {
    std::vector<Value> kept;
    for (const Value& item : all) {
      auto frame = std::make_shared<Frame>();
      frame->parent = saved;
      scope_ = frame;
      Assign(s.target, item);
      bool keep = Eval(*s.filter).Truthy();
      scope_ = saved;
      if (keep) kept.push_back(item);
    }
    all = std::move(kept);
  }
  auto items = std::make_shared<const std::vector<Value>>(std::move(all));
  if (items->empty()) {
    if (s.bodies.size() > 1) {
      auto frame = std::make_shared<Frame>();
      frame->parent = saved;
      scope_ = frame;
      ExecList(s.bodies[1]);
      scope_ = saved;
    }
    return;
  }
  for (size_t i = 0; i < items->size(); ++i) {
    auto frame = std::make_shared<Frame>();
    frame->parent = saved;
    scope_ = frame;
    auto state = std::make_shared<LoopState>();
    state->items = items;
    state->index0 = i;
    frame->Set("loop", Value::Loop(std::move(state)));
    Assign(s.target, (*items)[i]);
    Flow f = ExecList(s.bodies[0]);
    scope_ = saved;
    if (f == Flow::kBreak) break;
  }
}

void Interpreter::Assign(const Target& t, Value v) {
  if (!t.attribute.empty()) {
    const Value* ns = scope_->Lookup(t.names[0]);
    if (!ns || ns->kind() != Value::Kind::kNamespace) Fail("cannot assign attribute on non-namespace object");
    ns->ns().attrs.items.reserve(ns->ns().attrs.items.size() + 1);
    for (auto& kv : ns->ns().attrs.items) {
      if (kv.first == t.attribute) {
        kv.second = std::move(v);
        return;
      }
    }
    ns->ns().attrs.items.emplace_back(t.attribute, std::move(v));
    return;
  }
  if (!t.is_tuple) {
    scope_->Set(t.names[0], std::move(v));
    return;
  }
  std::vector<Value> parts = Iterate(v);
  if (parts.size() < t.names.size()) {
    Fail("not enough values to unpack (expected " + std::to_string(t.names.size()) + ", got " +
         std::to_string(parts.size()) + ")");
  }
  if (parts.size() > t.names.size()) {
    Fail("too many values to unpack (expected " + std::to_string(t.names.size()) + ")");
  }
  for (size_t i = 0; i < parts.size(); ++i) scope_->Set(t.names[i], parts[i]);
}

std::string Interpreter::RunMacro(const Stmt& def, const std::shared_ptr<Frame>& closure, CallArgs& args,
                                  const Value& caller) {
  if (macro_depth_ >= kMaxMacroDepth) Fail("maximum macro recursion depth exceeded");
  ++macro_depth_;
  auto frame = std::make_shared<Frame>();
  frame->parent = closure;
  auto saved = scope_;
  scope_ = frame;
  std::vector<bool> used_kw(args.kwargs.size(), false);
  for (size_t i = 0; i < def.params.size(); ++i) {
    const MacroParam& p = def.params[i];
    Value v;
    bool have = false;
    if (i < args.args.size()) {
      v = args.args[i];
      have = true;
    }
    for (size_t k = 0; k < args.kwargs.size(); ++k) {
      if (args.kwargs[k].first == p.name) {
        if (have) Fail("macro '" + def.text + "' got multiple values for argument '" + p.name + "'");
        v = args.kwargs[k].second;
        have = true;
        used_kw[k] = true;
      }
    }
    if (!have) {
      v = p.default_value ? Eval(*p.default_value) : Value::Undefined("parameter '" + p.name + "' was not provided");
    }
    frame->Set(p.name, std::move(v));
  }
  std::string name = def.kind == Stmt::Kind::kMacro ? def.text : "caller";
  if (args.args.size() > def.params.size() && !def.uses_varargs) {
    Fail("macro '" + name + "' takes not more than " + std::to_string(def.params.size()) + " argument(s)");
  }
  std::vector<Value> varargs;
  for (size_t i = def.params.size(); i < args.args.size(); ++i) varargs.push_back(args.args[i]);
  Dict kwargs;
  for (size_t k = 0; k < args.kwargs.size(); ++k) {
    if (used_kw[k]) continue;
    if (!def.uses_kwargs) Fail("macro '" + name + "' takes no keyword argument '" + args.kwargs[k].first + "'");
    kwargs.items.push_back(args.kwargs[k]);
  }
  frame->Set("varargs", Value::Tuple(std::move(varargs)));
  frame->Set("kwargs", Value::MakeDict(std::move(kwargs)));
  if (!caller.is_undefined()) frame->Set("caller", caller);
  std::string out = Capture(def.bodies[0]);
  scope_ = saved;
  --macro_depth_;
  return out;
}

Value Interpreter::Filter(const std::string& name, const Value& input, CallArgs& args) {
  return ApplyFilter(*this, name, input, args);
}

bool Interpreter::Test(const std::string& name, const Value& input, CallArgs& args) {
  return ApplyTest(*this, name, input, args);
}

}  // namespace llmserve::jinja
