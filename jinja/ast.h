#pragma once
// The syntax tree the parser builds and the interpreter walks. Nodes are
// immutable after parsing, so one parsed template serves concurrent renders.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace llmserve::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    kConst,    // constant
    kName,     // name
    kGetAttr,  // operands[0].name
    kGetItem,  // operands[0][operands[1]]
    kSlice,    // operands[0][a:b:c]; operands[1..3] may be null
    kCall,     // operands[0](args, kwargs)
    kFilter,   // operands[0] | name(args, kwargs); operands[0] is null in filter blocks
    kTest,     // operands[0] is name(args, kwargs); `negated` for `is not`
    kNeg,      // -operands[0]
    kPos,      // +operands[0]
    kNot,      // not operands[0]
    kBinary,   // operands[0] op operands[1]: + - * / // % **
    kConcat,   // operands joined with ~
    kCompare,  // operands[0] ops[0] operands[1] ops[1] operands[2] ...
    kAnd,      // operands[0] and operands[1]
    kOr,       // operands[0] or operands[1]
    kCond,     // operands[1] if operands[0] else operands[2] (operands[2] may be null)
    kList,     // [operands...]
    kTuple,    // (operands...)
    kDict,     // {keys[i]: operands[i]}
  };
  Kind kind;
  int line = 0;
  int column = 0;
  Value constant;                                     // kConst
  std::string name;                                   // name, attribute, filter, test or operator
  std::vector<ExprPtr> operands;                      // see Kind
  std::vector<ExprPtr> dict_keys;                     // kDict keys
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // call/filter/test keyword arguments
  std::vector<std::string> ops;                       // kCompare operators
  bool negated = false;                               // kTest: `is not`
};

// An assignment target: a name, a namespace attribute (ns.x) or a tuple of names.
struct Target {
  std::vector<std::string> names;  // one name, or several for tuple unpacking
  std::string attribute;           // non-empty for `ns.attribute`
  bool is_tuple = false;           // `a, b` (even with one name: `a,`)
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  enum class Kind {
    kData,      // literal text
    kOutput,    // {{ expr }}
    kIf,        // if/elif/else: conditions[i] guards bodies[i]; bodies.back() is else when longer
    kFor,       // for target in iter [if filter]: body [else]
    kSet,       // set target = expr
    kSetBlock,  // set target %}body{% endset (optional filter)
    kMacro,     // macro name(params): body
    kCallBlock, // call [(params)] expr: body  (the body is `caller()`)
    kFilterBlock,  // filter f: body
    kScope,     // with / generation: body in a new scope (with assignments)
    kBreak,
    kContinue,
  };
  Kind kind;
  int line = 0;
  int column = 0;
  std::string text;                   // kData; macro name
  ExprPtr expr;                       // output, set value, for iterable, call expression, filter
  ExprPtr filter;                     // for-loop `if` filter; set-block filter
  std::vector<ExprPtr> conditions;    // kIf
  std::vector<StmtList> bodies;       // kIf bodies; bodies[0] is the body for others; bodies[1] for-else
  Target target;                      // set/for target
  std::vector<MacroParam> params;     // macro / call-block parameters
  std::vector<std::pair<Target, ExprPtr>> assignments;  // kScope (with a = 1, b = 2)
  bool uses_varargs = false;          // macro body mentions `varargs`: extra positional args allowed
  bool uses_kwargs = false;           // macro body mentions `kwargs`: unknown keyword args allowed
};

}  // namespace llmserve::jinja
