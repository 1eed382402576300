#pragma once
// The built-in constraints of `llmserve bench serve --structured-output`:
// small corpora of the shapes agents and tools send, kept bounded (short
// strings, capped arrays, ranged integers) so that a constrained answer can
// finish within a typical --random-output-len and be checked afterwards.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmserve::deploy::bench {

// JSON Schemas (top-level objects with `required` keys), key order as written.
const std::vector<nlohmann::ordered_json>& BuiltinJsonSchemas();
// Regular expressions (full-match, Python syntax subset).
const std::vector<std::string>& BuiltinRegexes();
// Lists of choices, one list per request.
const std::vector<std::vector<std::string>>& BuiltinChoices();
// EBNF / GBNF grammars with a `root` rule.
const std::vector<std::string>& BuiltinGrammars();

}  // namespace llmserve::deploy::bench
