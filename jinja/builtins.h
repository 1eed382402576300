#pragma once
// Built-in operations of the interpreter, shared between its files: Python
// operators, attribute/item access, iteration, methods of str/dict/list,
// jinja2's filters and tests, and the global functions HF templates call.
// All of them throw TemplateError on failure.

#include <string>
#include <vector>

#include "jinja/callable.h"
#include "jinja/value.h"

namespace llmserve::jinja {

class Interpreter;

// ---- operators (operators.cc) ----
// Python `a op b` for + - * / // % **.
Value BinaryOp(const std::string& op, const Value& a, const Value& b);
// Python `a == b`.
bool Equals(const Value& a, const Value& b);
// Python `a < b` (throws when not comparable).
bool Less(const Value& a, const Value& b);
// Python `needle in haystack`.
bool Contains(const Value& haystack, const Value& needle);
// Python `fmt % arg` (printf-style; a tuple is the argument list, a dict a mapping).
std::string PercentFormat(const std::string& fmt, const Value& arg);
// Python -x.
Value Negate(const Value& v);
// Throws jinja2's UndefinedError for an undefined value.
void RequireDefined(const Value& v);

// ---- access (access.cc) ----
// jinja2's getattr(obj, name): attribute first, then item.
Value GetAttr(const Value& obj, const std::string& name);
// jinja2's getitem(obj, key): item first, then attribute.
Value GetItem(const Value& obj, const Value& key);
// obj[start:stop:step]; null pointers for omitted parts.
Value Slice(const Value& obj, const Value* start, const Value* stop, const Value* step);
// The items a for loop over `v` visits (dict keys, string characters...).
std::vector<Value> Iterate(const Value& v);
// len(v).
int64_t Length(const Value& v);

// ---- methods (methods.cc, str_methods.cc, str_format.cc) ----
// Calls self.name(args) when `self` has such a method; returns false when not.
bool CallMethod(const Value& self, const std::string& name, CallArgs& args, Value* result);
// True when `self.name` is a method (so getattr returns a bound method).
bool HasMethod(const Value& self, const std::string& name);
// Calls the str method s.name(args); returns false when str has no such method.
bool CallStrMethod(const std::string& s, const std::string& name, CallArgs& args, Value* result);
// True when str has a method `name`.
bool IsStrMethod(const std::string& name);
// Python str.strip/lstrip/rstrip with optional characters (null: whitespace).
std::string StripStr(const std::string& s, const std::string* chars, bool left, bool right);
// Python fmt.format(*args, **kwargs); format specs are refused.
std::string StrFormat(const std::string& fmt, const CallArgs& args);

// ---- filters and tests (filters.cc, tests.cc) ----
Value ApplyFilter(Interpreter& interp, const std::string& name, const Value& input, CallArgs& args);
bool ApplyTest(Interpreter& interp, const std::string& name, const Value& input, CallArgs& args);
// Whether a filter / test of that name exists (checked when a template is parsed).
bool IsKnownFilter(const std::string& name);
bool IsKnownTest(const std::string& name);

// ---- globals (globals.cc) ----
// range, namespace, dict, raise_exception, strftime_now; Undefined if unknown.
Value LookupGlobal(const std::string& name);

// ---- argument binding ----
// Matches positional and keyword arguments to `names`; missing ones are Undefined
// (use .is_undefined() to apply a default). Throws on unknown or surplus arguments.
std::vector<Value> BindArgs(const char* function, CallArgs& args, const std::vector<const char*>& names,
                            size_t required = 0);

}  // namespace llmserve::jinja
