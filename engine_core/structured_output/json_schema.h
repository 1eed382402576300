#pragma once
// The JSON Schema front end (and json_object): compiles a schema to a
// grammar of the JSON texts that validate against it.
//
// Supported: type (the seven, and lists), properties (emitted in schema
// order), required, additionalProperties (bool or schema; absent means
// false, as xgrammar's strict mode), items, prefixItems, minItems, maxItems,
// enum, const, anyOf, oneOf (as anyOf), allOf (merged when the parts do not
// conflict), $ref to "#", "#/$defs/..." and "#/definitions/..." (recursive
// too), string pattern / format (date, time, date-time, uuid, email, ipv4)
// / minLength / maxLength, integer minimum / maximum / exclusiveMinimum /
// exclusiveMaximum, nullable through type lists. Annotations (title,
// description, default, examples, $schema, $id, $comment, deprecated,
// readOnly, writeOnly) are ignored. Any other keyword is InvalidArgument
// naming it and its JSON pointer.
//
// Whitespace: by default any run of [ \n\t] may appear between tokens (as
// vLLM with xgrammar); with any_whitespace = false the output is compact
// (item_separator and key_separator, default "," and ":").

#include <memory>
#include <string>
#include <string_view>

#include "base/status_or.h"
#include "engine_core/structured_output/grammar.h"

namespace llmserve::engine_core::structured_output {

struct JsonSchemaOptions {
  bool any_whitespace = true;       // vLLM's disable_any_whitespace = !any_whitespace
  std::string item_separator = ",";  // used when !any_whitespace
  std::string key_separator = ":";   // used when !any_whitespace
};

// Compiles the schema text `schema` (JSON).
StatusOr<std::shared_ptr<const Grammar>> CompileJsonSchema(std::string_view schema,
                                                           const JsonSchemaOptions& options = {});

// Any JSON object (response_format json_object).
StatusOr<std::shared_ptr<const Grammar>> CompileJsonObject(const JsonSchemaOptions& options = {});

// Exactly one of `choices` (vLLM's `choice`). Errors: an empty list.
StatusOr<std::shared_ptr<const Grammar>> CompileChoice(const std::vector<std::string>& choices);

}  // namespace llmserve::engine_core::structured_output
