#pragma once
// How Python prints values: str(), repr(), float repr, and json.dumps as
// Hugging Face's `tojson` filter calls it (ensure_ascii=False by default).

#include <optional>
#include <string>

#include "jinja/value.h"

namespace llmserve::jinja {

// Python str(v); Undefined prints as "".
std::string PyStr(const Value& v);
// Python repr(v).
std::string PyRepr(const Value& v);
// Python repr of a float: shortest round-trip digits, "1.0", "1e+20", "inf", "nan".
std::string FormatFloat(double d);
// Python repr of a str.
std::string ReprString(const std::string& s);

// The arguments of json.dumps that HF's tojson forwards.
struct JsonOptions {
  std::optional<std::string> indent;    // None: one line; else the indent unit
  std::optional<std::string> item_sep;  // None: ", " (one line) or "," (indented)
  std::optional<std::string> key_sep;   // None: ": "
  bool sort_keys = false;               // sort dict keys
  bool ensure_ascii = false;            // escape non-ASCII as \uXXXX
};

// json.dumps(v, ...). Throws TemplateError for values JSON cannot hold.
std::string ToJson(const Value& v, const JsonOptions& options);

}  // namespace llmserve::jinja
