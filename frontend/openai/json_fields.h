#pragma once
// FieldReader: typed, validated reads of optional fields of a JSON request
// object, producing OpenAI-style 400 errors that name the field. Absent and
// null fields leave the output untouched (the default applies). Numbers must
// be JSON numbers and booleans JSON booleans (no "1" or "true" strings);
// integers also accept integral floats such as 2.0.

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/openai/api_error.h"

namespace llmserve::frontend::openai {

// The upper bound of most integer fields (max_tokens, n, ...).
inline constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

// A result that is either nothing (success) or the error to answer with.
using MaybeError = std::optional<ApiError>;

// Returns from the enclosing function when `expr` yields an error.
#define LLMSERVE_API_TRY(expr)                                  \
  do {                                                          \
    ::llmserve::frontend::openai::MaybeError _api_err = (expr); \
    if (_api_err) return _api_err;                              \
  } while (0)

// obj[key] when `obj` is an object holding a string there, else `fallback`:
// never throws, as nlohmann's value() does for a key of another type.
std::string StringMember(const nlohmann::json& obj, const char* key, const std::string& fallback = "");

// A short name for a JSON value's type, for error messages ("string", "array"...).
std::string JsonTypeName(const nlohmann::json& value);
std::string JsonTypeName(const nlohmann::ordered_json& value);

class FieldReader {
 public:
  // Reads fields of `object` (which must be a JSON object).
  explicit FieldReader(const nlohmann::json& object) : object_(object) {}

  // The field's value, or nullptr when absent or null.
  const nlohmann::json* Get(const char* name) const;

  // Records `name` as known (for UnknownFields) without reading it.
  void Known(const char* name) { known_.insert(name); }

  // Typed reads; each marks the field known and validates its type.
  MaybeError Bool(const char* name, bool* out);
  MaybeError Int(const char* name, int64_t min, int64_t max, int64_t* out);
  MaybeError Int32(const char* name, int32_t min, int32_t max, int32_t* out);
  MaybeError OptInt32(const char* name, int32_t min, int32_t max, std::optional<int32_t>* out);
  MaybeError Double(const char* name, double* out);
  MaybeError OptDouble(const char* name, std::optional<double>* out);
  MaybeError String(const char* name, std::string* out);
  MaybeError OptString(const char* name, std::optional<std::string>* out);
  // A list of integers, each within [min, max].
  MaybeError IntList(const char* name, int32_t min, int32_t max, std::vector<int32_t>* out);
  // A JSON object (kept as JSON), or null.
  MaybeError Object(const char* name, nlohmann::json* out);

  // Fields present in the object that no read or Known() call named, sorted.
  std::vector<std::string> UnknownFields() const;

 private:
  const nlohmann::json& object_;
  std::set<std::string> known_;
};

// Reads an integer value (integral floats accepted) within [min, max].
MaybeError ReadIntValue(const nlohmann::json& value, const std::string& what, int64_t min, int64_t max,
                        int64_t* out);

}  // namespace llmserve::frontend::openai
