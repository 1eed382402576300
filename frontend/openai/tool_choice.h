#pragma once
// tool_choice "required" and named functions are enforced by the grammar
// engine, as vLLM does: the request gets a JSON-schema constraint built from
// the functions' parameter schemas, so even a model that has never seen a
// tool returns calls that parse and validate.
//   named     the output is the arguments object of that function;
//   required  the output is [{"name": N, "parameters": {...}}, ...] with at
//             least one call (exactly one when parallel_tool_calls is false).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/json_fields.h"

namespace llmserve::frontend::openai {

// How the output of a chat request becomes tool calls.
enum class ToolChoiceMode { kNone, kAuto, kRequired, kNamed };

// One function call, as the response carries it.
struct FunctionCall {
  std::string name;
  std::string arguments;  // a JSON text
};

// The mode of a validated (tools, tool_choice) pair: tools without
// tool_choice mean auto; required with an empty tool list means none.
ToolChoiceMode ModeOf(const nlohmann::json& tools, const nlohmann::json& tool_choice);

// The schema (JSON text) that enforces `tool_choice`, or nullopt for none /
// auto. `tools` keeps the client's key order (parameters are generated in
// declared order). Errors (400): conflicting $defs between functions.
MaybeError ToolChoiceSchema(const nlohmann::ordered_json& tools, const nlohmann::json& tool_choice,
                            bool parallel_tool_calls, std::optional<std::string>* schema);

// The calls in an output produced under `mode` (kRequired or kNamed, with
// `named` the forced function's name). Empty when the output does not parse
// (e.g. cut by max_tokens).
std::vector<FunctionCall> CallsFromConstrainedOutput(ToolChoiceMode mode, const std::string& named,
                                                     const std::string& output);

}  // namespace llmserve::frontend::openai
