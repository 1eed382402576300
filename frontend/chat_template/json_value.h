#pragma once
// Conversion of JSON (request bodies, tokenizer_config.json) into template
// values, keeping object key order as Python's json.loads does.

#include <nlohmann/json.hpp>

#include "frontend/chat_template/value.h"

namespace llmserve::frontend::jinja {

// JSON null -> None, integers -> int, other numbers -> float, objects -> dict.
Value FromJson(const nlohmann::ordered_json& j);

}  // namespace llmserve::frontend::jinja
