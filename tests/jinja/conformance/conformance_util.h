#pragma once
// What both halves of the jinja2 conformance suite share: the suite's folder,
// its JSON files, the reference renders reference_render.py writes at test
// time (a ctest fixture), and the clock both sides pin strftime_now to.

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace llmserve::jinja::conformance {

using Json = nlohmann::ordered_json;

// The repository root and this suite's folder in it.
inline const std::string kRoot = LLMSERVE_SOURCE_DIR;
inline const std::string kHere = kRoot + "/tests/jinja/conformance";

// The whole file at `path`; false when it cannot be read.
inline bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// The JSON file at `path`; null when missing, discarded when not JSON.
inline Json ReadJson(const std::string& path) {
  std::string text;
  if (!ReadText(path, &text)) return Json();
  return Json::parse(text, nullptr, false);
}

// 2024-07-26 09:30:00, the time reference_render.py pins strftime_now to.
inline std::tm FixedNow() {
  std::tm tm{};
  tm.tm_year = 2024 - 1900;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  tm.tm_hour = 9;
  tm.tm_min = 30;
  std::time_t t = timegm(&tm);
  std::tm out{};
  gmtime_r(&t, &out);
  return out;
}

// jinja2's renders: {"available", "reason", "cases": {key: {"ok", "text"|"error"}}};
// null when reference_render.py has not run.
inline const Json& References() {
  static const Json refs = [] {
    const char* env = std::getenv("LLMSERVE_JINJA_REFERENCES");
    return ReadJson(env ? env : LLMSERVE_JINJA_REFERENCES);
  }();
  return refs;
}

// Why a case cannot be compared (empty when it can).
inline std::string MissingReferences() {
  const Json& refs = References();
  if (!refs.is_object()) {
    return "no reference renders (ctest runs reference_render.py first; run it by hand with "
           "/usr/bin/python3 tests/jinja/conformance/reference_render.py . OUT)";
  }
  if (!refs["available"].get<bool>()) return refs["reason"].get<std::string>();
  return "";
}

}  // namespace llmserve::jinja::conformance
