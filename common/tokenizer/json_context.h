#pragma once
// Where a tokenizer component is being read from, for error messages that
// name the file, the JSON path and the offending type or value.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace llmserve::common::tokenizer {

// A position in a JSON document: the file name and a JSON pointer.
struct JsonContext {
  std::string file;  // e.g. "/models/qwen3/tokenizer.json"
  std::string path;  // JSON pointer, e.g. "/pre_tokenizer/pretokenizers/1"

  // The context of child `key` (an object member) or `index` (an array item).
  JsonContext Child(std::string_view key) const;
  JsonContext Child(size_t index) const;

  // InvalidArgument "FILE: at PATH: MESSAGE".
  Status Error(std::string_view message) const;
};

// Reads obj[key] as a string / bool / integer. A missing key or null gives
// `fallback` when one is allowed (`required` false); a wrong type is an error.
Status GetString(const nlohmann::json& obj, const char* key, const JsonContext& ctx,
                 bool required, std::string* out);
Status GetBool(const nlohmann::json& obj, const char* key, const JsonContext& ctx,
               bool required, bool* out);
Status GetInt(const nlohmann::json& obj, const char* key, const JsonContext& ctx,
              bool required, long long* out);

// The "type" member of a component object (error if absent or not a string).
Status GetType(const nlohmann::json& obj, const JsonContext& ctx, std::string* type);

// The JSON type name of `j` ("object", "array", "string", ...).
std::string JsonTypeName(const nlohmann::json& j);

}  // namespace llmserve::common::tokenizer
