// Template: one parse serving concurrent renders, reference cycles a render
// creates, and Python-compatible value printing.

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jinja/py_format.h"
#include "jinja/template.h"
#include "tests/jinja/render_test_util.h"

namespace llmserve::jinja {
namespace {

using Json = nlohmann::ordered_json;

std::string Render(const std::string& source, const Json& vars = Json::object()) {
  auto r = ParseAndRender(source, vars);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

TEST(Template, ConcurrentRendersAgree) {
  std::string src =
      "{%- set ns = namespace(n=0) -%}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
      "<|{{ m.role }}|>{{ m.content | trim }}{{ loop.index }}/{{ ns.n }}{% endfor %}{{ tools | tojson }}";
  auto t = Template::Parse(src);
  ASSERT_TRUE(t.ok());
  const Template& tmpl = **t;
  std::vector<Json> inputs;
  std::vector<std::string> want;
  for (int i = 0; i < 8; ++i) {
    Json messages = Json::array();
    for (int j = 0; j <= i; ++j) messages.push_back({{"role", j % 2 ? "assistant" : "user"}, {"content", " m" + std::to_string(j)}});
    inputs.push_back({{"messages", messages}, {"tools", Json::array({{{"n", i}}})}});
    want.push_back(*tmpl.Render(VarsFromJson(inputs.back()), {}));
  }
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&, th] {
      for (int k = 0; k < 200; ++k) {
        int i = (th + k) % 8;
        auto r = tmpl.Render(VarsFromJson(inputs[i]), {});
        if (!r.ok() || *r != want[i]) ++mismatches[th];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(Template, SelfReferencesDoNotBreakRendering) {
  // Macros held by their own scope and namespaces holding themselves are
  // reference cycles; the sanitizer build checks they are freed.
  EXPECT_EQ(Render("{% macro m(n) %}{{ n }}{% if n %}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(2) }}"
                   "{% set ns = namespace() %}{% set ns.me = ns %}{% set ns.list = [ns] %}{{ ns.me.list | length }}"),
            "2101");
  auto r = ParseAndRender("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("recursion depth"), std::string::npos);
}

TEST(PyFormat, FloatsPrintLikePython) {
  EXPECT_EQ(FormatFloat(1.0), "1.0");
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(1e16), "1e+16");
  EXPECT_EQ(FormatFloat(1e15), "1000000000000000.0");
  EXPECT_EQ(FormatFloat(1.5e-5), "1.5e-05");
  EXPECT_EQ(FormatFloat(0.0001), "0.0001");
  EXPECT_EQ(FormatFloat(-2.5), "-2.5");
  EXPECT_EQ(FormatFloat(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(FormatFloat(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(FormatFloat(-0.0), "-0.0");
}

TEST(PyFormat, ReprQuotesAndEscapesLikePython) {
  EXPECT_EQ(ReprString("it's"), "\"it's\"");
  EXPECT_EQ(ReprString("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(ReprString("a\nb\\"), "'a\\nb\\\\'");
  EXPECT_EQ(ReprString("\xc2\xa0\xe2\x80\x8b\xf0\x9f\x98\x80"), "'\\xa0\\u200b\xf0\x9f\x98\x80'");
}

}  // namespace
}  // namespace llmserve::jinja
