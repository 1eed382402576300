#pragma once
// Things a template can call: macros, global functions (range, namespace,
// raise_exception, strftime_now...) and methods bound to a value
// (`message.content.startswith`), plus the loop object's state.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace llmserve::jinja {

class Interpreter;

// Positional and keyword arguments of one call.
struct CallArgs {
  std::vector<Value> args;                            // positional, in order
  std::vector<std::pair<std::string, Value>> kwargs;  // keyword, in order
};

// Something callable from a template. Failures throw TemplateError (see error.h).
struct Callable {
  virtual ~Callable() = default;
  // Calls it; `interp` gives access to rendering state (macros render output).
  virtual Value Call(Interpreter& interp, CallArgs& args) const = 0;
  // The name used in error messages and repr.
  virtual std::string Name() const = 0;
};

// The state behind `loop` in a for loop body.
struct LoopState {
  std::shared_ptr<const std::vector<Value>> items;  // what is iterated (after the `if` filter)
  size_t index0 = 0;                                // position of the current item
  int depth0 = 0;                                   // nesting of recursive loops (always 0 here)
};

}  // namespace llmserve::jinja
