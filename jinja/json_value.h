#pragma once
// Conversion of JSON (request bodies, tokenizer_config.json) into template
// values, keeping object key order as Python's json.loads does.

#include <nlohmann/json.hpp>

#include "jinja/value.h"

namespace llmserve::jinja {

// JSON null -> None, integers -> int, other numbers -> float, objects -> dict.
Value FromJson(const nlohmann::ordered_json& j);

}  // namespace llmserve::jinja
