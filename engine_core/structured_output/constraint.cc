#include "engine_core/structured_output/constraint.h"

#include "engine_core/structured_output/ebnf.h"
#include "engine_core/structured_output/json_schema.h"
#include "engine_core/structured_output/regex.h"

namespace llmserve::engine_core::structured_output {

StatusOr<std::shared_ptr<const Grammar>> GrammarForConstraint(const proto::StructuredOutputsParams& params) {
  const int n = params.NumConstraints();
  if (n != 1) {
    return Status::InvalidArgument(
        n == 0 ? "structured_outputs sets no constraint: give one of json, regex, choice, grammar, json_object"
               : "structured_outputs sets " + std::to_string(n) +
                     " constraints: give exactly one of json, regex, choice, grammar, json_object");
  }
  if (params.whitespace_pattern) {
    return Status::InvalidArgument(
        "whitespace_pattern is not supported; use disable_any_whitespace for compact JSON");
  }
  JsonSchemaOptions options;
  options.any_whitespace = !params.disable_any_whitespace;
  if (params.json) {
    auto g = CompileJsonSchema(*params.json, options);
    if (!g.ok()) return g.status().WithContext("invalid JSON schema");
    return g;
  }
  if (params.json_object) return CompileJsonObject(options);
  if (params.regex) {
    auto g = CompileRegex(*params.regex);
    if (!g.ok()) return g.status().WithContext("invalid regex");
    return g;
  }
  if (params.choice) {
    auto g = CompileChoice(*params.choice);
    if (!g.ok()) return g.status().WithContext("invalid choice");
    return g;
  }
  auto g = CompileEbnf(*params.grammar);
  if (!g.ok()) return g.status().WithContext("invalid grammar");
  return g;
}

}  // namespace llmserve::engine_core::structured_output
