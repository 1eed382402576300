#pragma once
// Parse-and-render in one call for the jinja library's tests, with the
// variables given as a JSON object (key order kept, as jinja2 sees kwargs).

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status_or.h"
#include "jinja/json_value.h"
#include "jinja/template.h"

namespace llmserve::jinja {

// The members of a JSON object as template variables.
inline std::vector<std::pair<std::string, Value>> VarsFromJson(const nlohmann::ordered_json& vars) {
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [name, value] : vars.items()) out.emplace_back(name, FromJson(value));
  return out;
}

// Parses `source` and renders it with `vars`; the first error either step gives.
inline StatusOr<std::string> ParseAndRender(const std::string& source,
                                            const nlohmann::ordered_json& vars = nlohmann::ordered_json::object(),
                                            const RenderEnv& env = {}) {
  auto t = Template::Parse(source);
  if (!t.ok()) return t.status();
  return (*t)->Render(VarsFromJson(vars), env);
}

}  // namespace llmserve::jinja
