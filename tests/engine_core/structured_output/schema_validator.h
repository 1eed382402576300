#pragma once
// A small JSON Schema validator for the property test, written from the
// specification independently of the grammar compiler: it checks the
// keywords the random schemas use. Formats are checked by hand, patterns
// with std::regex (search semantics, as the specification says).

#include <cmath>
#include <cstdint>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/utf8.h"

namespace llmserve::engine_core::structured_output::testing {

using ojson = nlohmann::ordered_json;

inline bool AllDigits(const std::string& s, size_t b, size_t n) {
  if (b + n > s.size()) return false;
  for (size_t i = b; i < b + n; ++i)
    if (!isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

inline bool ValidDate(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-' || !AllDigits(s, 0, 4) || !AllDigits(s, 5, 2) || !AllDigits(s, 8, 2)) return false;
  int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), d = std::stoi(s.substr(8, 2));
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m >= 1 && m <= 12 && d >= 1 && d <= (m == 2 ? (leap ? 29 : 28) : kDays[m - 1]);
}

inline bool ValidTime(const std::string& s) {
  if (s.size() < 9 || s[2] != ':' || s[5] != ':' || !AllDigits(s, 0, 2) || !AllDigits(s, 3, 2) || !AllDigits(s, 6, 2)) return false;
  if (std::stoi(s.substr(0, 2)) > 23 || std::stoi(s.substr(3, 2)) > 59 || std::stoi(s.substr(6, 2)) > 59) return false;
  size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    size_t b = ++i;
    while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == b) return false;
  }
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) return i + 1 == s.size();
  if (i + 6 != s.size() || (s[i] != '+' && s[i] != '-') || s[i + 3] != ':') return false;
  return AllDigits(s, i + 1, 2) && AllDigits(s, i + 4, 2) && std::stoi(s.substr(i + 1, 2)) <= 23 &&
         std::stoi(s.substr(i + 4, 2)) <= 59;
}

inline bool ValidFormat(const std::string& f, const std::string& s) {
  if (f == "date") return ValidDate(s);
  if (f == "time") return ValidTime(s);
  if (f == "date-time") {
    size_t t = s.find_first_of("Tt");
    return t != std::string::npos && ValidDate(s.substr(0, t)) && ValidTime(s.substr(t + 1));
  }
  if (f == "uuid") {
    if (s.size() != 36) return false;
    for (size_t i = 0; i < 36; ++i) {
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash ? s[i] != '-' : !isxdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return true;
  }
  if (f == "ipv4") {
    int parts = 0;
    size_t i = 0;
    while (true) {
      size_t b = i;
      while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) ++i;
      if (i == b || i - b > 3 || (i - b > 1 && s[b] == '0') || std::stoi(s.substr(b, i - b)) > 255) return false;
      ++parts;
      if (i == s.size()) return parts == 4;
      if (s[i++] != '.') return false;
    }
  }
  if (f == "email") {
    size_t at = s.find('@');
    return at != std::string::npos && at > 0 && s.find('@', at + 1) == std::string::npos &&
           s.find('.', at) != std::string::npos && s.back() != '.' && s.find("..") == std::string::npos;
  }
  return false;
}

// Whether `v` validates against `s` (root schema `root` for $ref).
inline bool Validate(const ojson& v, const ojson& s, const ojson& root) {
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("$ref")) return Validate(v, root.at(ojson::json_pointer(s["$ref"].get<std::string>().substr(1))), root);
  if (s.contains("anyOf")) {
    bool any = false;
    for (const ojson& sub : s["anyOf"]) any = any || Validate(v, sub, root);
    if (!any) return false;
  }
  if (s.contains("const") && v != s["const"]) return false;
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) return false;
  if (s.contains("type")) {
    std::vector<std::string> types;
    if (s["type"].is_string()) types.push_back(s["type"]);
    else for (const ojson& t : s["type"]) types.push_back(t);
    bool ok = false;
    for (const std::string& t : types) {
      ok = ok || (t == "null" && v.is_null()) || (t == "boolean" && v.is_boolean()) ||
           (t == "integer" && v.is_number() && std::floor(v.get<double>()) == v.get<double>()) || (t == "number" && v.is_number()) ||
           (t == "string" && v.is_string()) || (t == "object" && v.is_object()) || (t == "array" && v.is_array());
    }
    if (!ok) return false;
  }
  if (v.is_number()) {  // big integers parse as doubles: compare as doubles
    double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return false;
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return false;
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return false;
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return false;
  }
  if (v.is_string()) {
    const std::string& str = v.get_ref<const std::string&>();
    size_t n = base::CountCodePoints(str);
    if (s.contains("minLength") && n < s["minLength"].get<size_t>()) return false;
    if (s.contains("maxLength") && n > s["maxLength"].get<size_t>()) return false;
    if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>()))) return false;
    if (s.contains("format") && !ValidFormat(s["format"], str)) return false;
  }
  if (v.is_object()) {
    for (const ojson& r : s.value("required", ojson::array()))
      if (!v.contains(r.get<std::string>())) return false;
    ojson props = s.value("properties", ojson::object());
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props.contains(it.key())) {
        if (!Validate(it.value(), props[it.key()], root)) return false;
      } else if (s.contains("additionalProperties") && !Validate(it.value(), s["additionalProperties"], root)) {
        return false;
      }
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return false;
    size_t k = s.contains("prefixItems") ? s["prefixItems"].size() : 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const ojson& sub = i < k ? s["prefixItems"][i] : s.value("items", ojson(true));
      if (!Validate(v[i], sub, root)) return false;
    }
  }
  return true;
}

}  // namespace llmserve::engine_core::structured_output::testing
