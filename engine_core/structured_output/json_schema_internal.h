#pragma once
// Internal to the JSON Schema front end: the compiler object shared by
// json_schema.cc (dispatch, objects, arrays, combinators, $ref) and
// json_schema_strings.cc (strings, formats, numbers, literal values).

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine_core/structured_output/json_schema.h"

namespace llmserve::engine_core::structured_output {

class JsonSchemaCompiler {
 public:
  JsonSchemaCompiler(const nlohmann::ordered_json& root, const JsonSchemaOptions& options);
  // Builds the grammar whose root matches `root`.
  StatusOr<std::shared_ptr<const Grammar>> Build();
  // Builds the grammar of any JSON object.
  StatusOr<std::shared_ptr<const Grammar>> BuildAnyObject();

 private:
  using json = nlohmann::ordered_json;
  // A value matching `s` (at JSON pointer `path`).
  StatusOr<Expr> Value(const json& s, const std::string& path);
  StatusOr<Expr> ValueOfType(const std::string& type, const json& s, const std::string& path);
  StatusOr<Expr> Ref(const std::string& ref, const std::string& path);
  StatusOr<Expr> AnyOf(const json& s, const char* key, const std::string& path);
  StatusOr<json> MergeAllOf(const json& s, const std::string& path);
  StatusOr<Expr> Object(const json& s, const std::string& path);
  StatusOr<Expr> Array(const json& s, const std::string& path);
  Status CheckKeywords(const json& s, const std::string& path) const;

  // json_schema_strings.cc
  StatusOr<Expr> String(const json& s, const std::string& path);
  StatusOr<Expr> Integer(const json& s, const std::string& path);
  StatusOr<Expr> Number(const json& s, const std::string& path);
  // The exact JSON text of `v` (enum / const members, object keys).
  Expr Literal(const json& v) const;
  // A JSON string body rule (characters then the closing quote) with a
  // length range, shared across grammars.
  Expr StringBody(int32_t min_len, int32_t max_len);
  // Any JSON value / object / array / string / number.
  Expr AnyValue();
  Expr AnyObject();
  Expr Ws() const;
  Expr ItemSep() const;
  Expr KeySep() const;

  const json& root_;
  JsonSchemaOptions options_;
  GrammarBuilder b_;
  std::map<std::string, int32_t> ref_rules_;
  std::map<std::pair<int32_t, int32_t>, int32_t> string_rules_;
  std::map<std::string, int32_t> pattern_rules_;
  int32_t any_value_ = -1;
  int32_t any_object_ = -1;
  int32_t any_array_ = -1;
  int depth_ = 0;
};

}  // namespace llmserve::engine_core::structured_output
