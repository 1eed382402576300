// Jinja conformance: every snippet of snippets.json (one Jinja behaviour
// each) rendered by the jinja library with the snippets' shared variables
// must be byte-identical to jinja2's render in Hugging Face's environment
// (reference_render.py, a ctest fixture), or both must raise.

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jinja/json_value.h"
#include "jinja/template.h"
#include "tests/jinja/conformance/conformance_util.h"

namespace llmserve::jinja::conformance {
namespace {

const Json& Snippets() {
  static const Json s = ReadJson(kHere + "/snippets.json");
  return s;
}

std::vector<std::string> SnippetIds() {
  std::vector<std::string> ids;
  if (!Snippets().is_object()) return ids;
  for (const auto& s : Snippets()["snippets"]) ids.push_back(s["id"].get<std::string>());
  return ids;
}

// Parses and renders `source` with the snippets' variables, as jinja2's
// template.render(**vars) does.
StatusOr<std::string> RenderSnippet(const std::string& source) {
  auto tmpl = Template::Parse(source);
  if (!tmpl.ok()) return tmpl.status();
  std::vector<std::pair<std::string, Value>> vars;
  for (const auto& [name, value] : Snippets()["vars"].items()) vars.emplace_back(name, FromJson(value));
  RenderEnv env;
  env.now = FixedNow;
  return (*tmpl)->Render(std::move(vars), env);
}

class SnippetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SnippetTest, MatchesJinja2) {
  if (std::string why = MissingReferences(); !why.empty()) GTEST_SKIP() << why;
  const Json& refs = References();
  std::string key = "snippet/" + GetParam();
  ASSERT_TRUE(refs["cases"].contains(key)) << key;
  std::string source;
  for (const auto& s : Snippets()["snippets"]) {
    if (s["id"] == GetParam()) source = s["template"].get<std::string>();
  }
  StatusOr<std::string> rendered = RenderSnippet(source);
  const Json& ref = refs["cases"][key];
  if (ref["ok"].get<bool>()) {
    ASSERT_TRUE(rendered.ok()) << "jinja2 rendered, llmserve failed: " << rendered.status().ToString();
    EXPECT_EQ(*rendered, ref["text"].get<std::string>()) << "template: " << source;
  } else {
    EXPECT_FALSE(rendered.ok()) << "jinja2 raised (" << ref["error"].get<std::string>()
                                << ") but llmserve rendered: " << *rendered << "\ntemplate: " << source;
  }
}

INSTANTIATE_TEST_SUITE_P(Jinja, SnippetTest, ::testing::ValuesIn(SnippetIds()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace llmserve::jinja::conformance
