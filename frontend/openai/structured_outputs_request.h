#pragma once
// The structured-output fields of a completion or chat request, as vLLM
// accepts them, folded into one proto::StructuredOutputsParams:
//   structured_outputs  {json | regex | choice | grammar | json_object,
//                        disable_any_whitespace, disable_additional_properties}
//   response_format     {"type": "text" | "json_object" | "json_schema",
//                        "json_schema": {name, description, schema, strict}}
//   guided_json, guided_regex, guided_choice, guided_grammar (legacy names,
//   only without structured_outputs; guided_decoding_backend is ignored).
// The constraint is compiled here (without a vocabulary) so that a bad
// schema, regex or grammar is a 400 naming the problem and where it is, before
// any engine sees the request. Constraints this server cannot enforce
// (structural_tag, whitespace_pattern) are 400s, never ignored.

#include <optional>

#include <string>
#include <string_view>

#include "base/status_or.h"
#include "frontend/openai/json_fields.h"
#include "frontend/openai/sampling_request.h"
#include "proto/structured_outputs_params.h"

namespace llmserve::frontend::openai {

// Reads and validates the fields above, with `config`'s defaults applied;
// `*out` stays unset when the request has no constraint (or only
// response_format text).
// `body` is the request's text (schemas keep their key order from it).
MaybeError ReadStructuredOutputs(FieldReader& reader, std::string_view body, const StructuredOutputsConfig& config,
                                 std::optional<proto::StructuredOutputsParams>* out);

// Constrains the output to the JSON schema `schema` (tool_choice required or
// named), replacing any other constraint as vLLM does; a schema the grammar
// engine cannot compile is a 400 about `param`.
MaybeError ConstrainToJsonSchema(const std::string& schema, const StructuredOutputsConfig& config,
                                 const std::string& param, std::optional<proto::StructuredOutputsParams>* out);

// Parses --structured-outputs-config (JSON, vLLM's StructuredOutputsConfig
// keys): backend (any of vLLM's names; this server has one grammar engine),
// disable_any_whitespace, disable_additional_properties, disable_fallback.
// Unknown keys and wrong types are errors.
StatusOr<StructuredOutputsConfig> ParseStructuredOutputsConfig(const std::string& json);

}  // namespace llmserve::frontend::openai
