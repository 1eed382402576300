#pragma once
// Turning a request body into a JSON object, with the errors vLLM gives:
// 400 for invalid UTF-8, invalid JSON, or a top level that is not an object.

#include <string_view>

#include <nlohmann/json.hpp>

#include "frontend/openai/json_fields.h"

namespace llmserve::frontend::openai {

// True if `text` is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// Parses `body` into `out`, which must come out a JSON object.
MaybeError ParseJsonObject(std::string_view body, nlohmann::json* out);

}  // namespace llmserve::frontend::openai
