#pragma once
// Interpreter: renders a parsed template against a set of variables. One
// Interpreter per render; it owns that render's scopes and output buffer, and
// only reads the (shared, immutable) syntax tree.

#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/ast.h"
#include "jinja/callable.h"
#include "jinja/value.h"

namespace llmserve::jinja {

// A variable scope: the template's globals, a for-loop iteration, a macro call.
struct Frame {
  std::vector<std::pair<std::string, Value>> vars;  // names set in this scope
  std::shared_ptr<Frame> parent;                    // enclosing scope, null for the root

  // The variable in this scope or an enclosing one, or nullptr.
  const Value* Lookup(const std::string& name) const;
  // Sets `name` in this scope.
  void Set(const std::string& name, Value v);
};

// What the environment provides besides the template's variables.
struct RenderEnv {
  std::function<std::tm()> now;   // local time for strftime_now(); null: the system clock
  uint64_t max_steps = 5'000'000;  // statements + expressions one render may evaluate
};

class Interpreter {
 public:
  Interpreter(std::shared_ptr<Frame> globals, const RenderEnv* env);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Renders `body` into a string. Throws TemplateError.
  std::string Render(const StmtList& body);

  // Runs a macro body in a fresh scope below `closure` and returns its output.
  std::string RunMacro(const Stmt& macro, const std::shared_ptr<Frame>& closure, CallArgs& args,
                       const Value& caller);
  // Applies a filter by name (used by map()).
  Value Filter(const std::string& name, const Value& input, CallArgs& args);
  // Applies a test by name (used by select()/selectattr()).
  bool Test(const std::string& name, const Value& input, CallArgs& args);
  // The time strftime_now() formats.
  std::tm Now() const;
  // Registers a namespace created by this render (emptied when the render ends).
  void TrackNamespace(std::shared_ptr<Namespace> ns);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  // ---- statements (interpreter.cc) ----
  Flow ExecList(const StmtList& list);
  Flow Exec(const Stmt& s);
  void ExecFor(const Stmt& s);
  void ExecCallBlock(const Stmt& s);
  Flow ExecScope(const Stmt& s);
  // Applies a set / filter block's filter chain to its captured body `v`.
  Value FilterCaptured(const Expr& filter, Value v);
  void Assign(const Target& t, Value v);
  std::string Capture(const StmtList& body);
  void Tick();

  // ---- expressions (interpreter_expressions.cc) ----
  // Evaluates `e`, adding its position to an error that has none.
  Value Eval(const Expr& e);
  Value EvalInner(const Expr& e);
  Value EvalCall(const Expr& e);
  Value EvalSlice(const Expr& e);
  Value EvalFilterOrTest(const Expr& e);
  Value EvalConcat(const Expr& e);
  bool EvalCompare(const Expr& e);
  // List, tuple and dict displays.
  Value EvalDisplay(const Expr& e);
  void EvalArgs(const Expr& e, size_t first, CallArgs* args);

  std::shared_ptr<Frame> scope_;  // innermost scope
  const RenderEnv* env_;
  std::string* out_ = nullptr;
  int macro_depth_ = 0;
  uint64_t steps_ = 0;
  std::vector<std::shared_ptr<Frame>> closures_;     // scopes macros were defined in
  std::vector<std::shared_ptr<Namespace>> namespaces_;  // namespaces created by this render
};

}  // namespace llmserve::jinja
