#pragma once
// StructuredOutputsParams: the constraint a request's output must satisfy
// (vLLM's StructuredOutputsParams). Exactly one constraint is set: a JSON
// schema, a regex, a list of choices, an EBNF grammar, or any JSON object.
// Travels inside SamplingParams as a map keyed by vLLM's field names with
// defaults omitted.

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/wire_codec.h"

namespace llmserve::proto {

struct StructuredOutputsParams {
  std::optional<std::string> json;                 // a JSON Schema, as JSON text
  std::optional<std::string> regex;                // the whole output matches it
  std::optional<std::vector<std::string>> choice;  // the output is one of these
  std::optional<std::string> grammar;              // EBNF / GBNF, start rule `root`
  bool json_object = false;                        // any JSON object
  bool disable_any_whitespace = false;             // compact JSON (no free whitespace)
  bool disable_additional_properties = false;      // objects without a schema for extras allow none
  std::optional<std::string> whitespace_pattern;   // (not supported: rejected by the frontend)

  // How many of the constraints are set (valid requests have exactly one).
  int NumConstraints() const {
    return json.has_value() + regex.has_value() + choice.has_value() + grammar.has_value() + json_object;
  }
  // A key that is equal exactly for requests that compile to the same grammar.
  std::string CacheKey() const;

  bool operator==(const StructuredOutputsParams&) const = default;
};

void Pack(wire::Packer& p, const StructuredOutputsParams& v);
Status Read(const msgpack::object& o, std::string_view field, StructuredOutputsParams* out);

}  // namespace llmserve::proto
