#include "frontend/openai/json_fields.h"

#include <cmath>

namespace llmserve::frontend::openai {

std::string StringMember(const nlohmann::json& obj, const char* key, const std::string& fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "number";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::object: return "object";
    default: return "value";
  }
}

std::string JsonTypeName(const nlohmann::ordered_json& value) {
  // Both JSON types share one value_t.
  return JsonTypeName(nlohmann::json(value.type()));
}

const nlohmann::json* FieldReader::Get(const char* name) const {
  auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

MaybeError FieldReader::Bool(const char* name, bool* out) {
  known_.insert(name);
  const nlohmann::json* v = Get(name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) return BadRequest(std::string("'") + name + "' must be a boolean, got " + JsonTypeName(*v), name);
  *out = v->get<bool>();
  return std::nullopt;
}

MaybeError ReadIntValue(const nlohmann::json& value, const std::string& what, int64_t min, int64_t max,
                        int64_t* out) {
  int64_t result = 0;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    result = value.get<int64_t>();
  } else if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      return BadRequest(what + " must be at most " + std::to_string(max) + ", got " + value.dump());
    }
    result = static_cast<int64_t>(u);
  } else if (value.is_number_float()) {
    double d = value.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e15) {
      return BadRequest(what + " must be an integer, got " + value.dump());
    }
    result = static_cast<int64_t>(d);
  } else {
    return BadRequest(what + " must be an integer, got " + JsonTypeName(value));
  }
  if (result < min) return BadRequest(what + " must be at least " + std::to_string(min) + ", got " + std::to_string(result));
  if (result > max) return BadRequest(what + " must be at most " + std::to_string(max) + ", got " + std::to_string(result));
  *out = result;
  return std::nullopt;
}

MaybeError FieldReader::Int(const char* name, int64_t min, int64_t max, int64_t* out) {
  known_.insert(name);
  const nlohmann::json* v = Get(name);
  if (!v) return std::nullopt;
  MaybeError e = ReadIntValue(*v, std::string("'") + name + "'", min, max, out);
  if (e) e->param = name;
  return e;
}

MaybeError FieldReader::Int32(const char* name, int32_t min, int32_t max, int32_t* out) {
  int64_t v = *out;
  LLMSERVE_API_TRY(Int(name, min, max, &v));
  *out = static_cast<int32_t>(v);
  return std::nullopt;
}

MaybeError FieldReader::OptInt32(const char* name, int32_t min, int32_t max, std::optional<int32_t>* out) {
  if (!Get(name)) {
    known_.insert(name);
    return std::nullopt;
  }
  int32_t v = 0;
  LLMSERVE_API_TRY(Int32(name, min, max, &v));
  *out = v;
  return std::nullopt;
}

MaybeError FieldReader::Double(const char* name, double* out) {
  known_.insert(name);
  const nlohmann::json* v = Get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) return BadRequest(std::string("'") + name + "' must be a number, got " + JsonTypeName(*v), name);
  *out = v->get<double>();
  return std::nullopt;
}

MaybeError FieldReader::OptDouble(const char* name, std::optional<double>* out) {
  if (!Get(name)) {
    known_.insert(name);
    return std::nullopt;
  }
  double v = 0;
  LLMSERVE_API_TRY(Double(name, &v));
  *out = v;
  return std::nullopt;
}

MaybeError FieldReader::String(const char* name, std::string* out) {
  known_.insert(name);
  const nlohmann::json* v = Get(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) return BadRequest(std::string("'") + name + "' must be a string, got " + JsonTypeName(*v), name);
  *out = v->get<std::string>();
  return std::nullopt;
}

MaybeError FieldReader::OptString(const char* name, std::optional<std::string>* out) {
  if (!Get(name)) {
    known_.insert(name);
    return std::nullopt;
  }
  std::string v;
  LLMSERVE_API_TRY(String(name, &v));
  *out = std::move(v);
  return std::nullopt;
}

MaybeError FieldReader::IntList(const char* name, int32_t min, int32_t max, std::vector<int32_t>* out) {
  known_.insert(name);
  const nlohmann::json* v = Get(name);
  if (!v) return std::nullopt;
  if (!v->is_array()) return BadRequest(std::string("'") + name + "' must be an array of integers, got " + JsonTypeName(*v), name);
  out->clear();
  for (size_t i = 0; i < v->size(); ++i) {
    int64_t x = 0;
    MaybeError e = ReadIntValue((*v)[i], std::string("'") + name + "[" + std::to_string(i) + "]'", min, max, &x);
    if (e) {
      e->param = name;
      return e;
    }
    out->push_back(static_cast<int32_t>(x));
  }
  return std::nullopt;
}

MaybeError FieldReader::Object(const char* name, nlohmann::json* out) {
  known_.insert(name);
  const nlohmann::json* v = Get(name);
  if (!v) return std::nullopt;
  if (!v->is_object()) return BadRequest(std::string("'") + name + "' must be an object, got " + JsonTypeName(*v), name);
  *out = *v;
  return std::nullopt;
}

std::vector<std::string> FieldReader::UnknownFields() const {
  std::vector<std::string> unknown;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (!known_.count(it.key())) unknown.push_back(it.key());
  }
  return unknown;  // nlohmann objects iterate in key order
}

}  // namespace llmserve::frontend::openai
