// Bad templates give clear errors that name the template position; none of
// them crash, and runaway templates stop.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "jinja/template.h"
#include "tests/jinja/render_test_util.h"

namespace llmserve::jinja {
namespace {

using Json = nlohmann::ordered_json;

std::string ParseError(const std::string& source) {
  auto t = Template::Parse(source);
  EXPECT_FALSE(t.ok()) << "parsed: " << source;
  return t.ok() ? "" : t.status().ToString();
}

// Renders with the variables a chat template sees in this test: bos_token and messages.
std::string RenderError(const std::string& source, const Json& messages = Json::array(), const RenderEnv& env = {}) {
  auto t = Template::Parse(source);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return "";
  auto r = (*t)->Render(VarsFromJson({{"bos_token", "<s>"}, {"messages", messages}}), env);
  EXPECT_FALSE(r.ok()) << "rendered: " << (r.ok() ? *r : "");
  return r.ok() ? "" : r.status().ToString();
}

TEST(TemplateErrors, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(ParseError("{% if x %}\n  {{ foo( }}\n{% endif %}"),
            "INVALID_ARGUMENT: chat template syntax error at line 2, column 11: unexpected '}', expected ')'");
  EXPECT_EQ(ParseError("Hello {{ name | frobnicate }}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 17: No filter named 'frobnicate'.");
  EXPECT_EQ(ParseError("{{ x is shiny }}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 6: No test named 'shiny'.");
  EXPECT_EQ(ParseError("line one\n{% for m in messages %}x"),
            "INVALID_ARGUMENT: chat template syntax error at line 2, column 25: unexpected end of template, "
            "expected 'else' or 'endfor'");
  EXPECT_EQ(ParseError("{{ 'unterminated }}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 4: unterminated string literal");
  EXPECT_EQ(ParseError("a\nb {% frobnicate %}"),
            "INVALID_ARGUMENT: chat template syntax error at line 2, column 6: Encountered unknown tag 'frobnicate'");
  EXPECT_EQ(ParseError("{# never closed"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 1: Missing end of comment tag");
  EXPECT_EQ(ParseError("{{ a b }}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 6: expected end of print statement, "
            "got 'b'");
  EXPECT_EQ(ParseError("{% break %}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 4: 'break' outside of a for loop");
  EXPECT_EQ(ParseError("{{ 1 $ 2 }}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 6: unexpected char '$'");
}

TEST(TemplateErrors, UnsupportedSyntaxIsNamed) {
  EXPECT_EQ(ParseError("{% include 'other.jinja' %}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 4: unsupported tag 'include' (not "
            "available to chat templates)");
  EXPECT_EQ(ParseError("{% extends 'base' %}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 4: unsupported tag 'extends' (not "
            "available to chat templates)");
  EXPECT_EQ(ParseError("{% for x in xs recursive %}{% endfor %}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 16: unsupported: recursive for loops");
  EXPECT_EQ(ParseError("{{ f(*args) }}"),
            "INVALID_ARGUMENT: chat template syntax error at line 1, column 6: unsupported: *args/**kwargs in calls");
}

TEST(TemplateErrors, RenderErrorsNamePosition) {
  Json messages = Json::parse(R"([{"role": "user", "content": "hi"}])");
  EXPECT_EQ(RenderError("{% for m in messages %}\n{{ m.content.nope() }}{% endfor %}", messages),
            "INVALID_ARGUMENT: chat template render error at line 2, column 13: 'str object' has no attribute "
            "'nope'");
  EXPECT_EQ(RenderError("{{ messages[0].content + 1 }}", messages),
            "INVALID_ARGUMENT: chat template render error at line 1, column 24: can only concatenate str (not "
            "\"int\") to str");
  EXPECT_EQ(RenderError("x\n  {{ nothing.attr }}"),
            "INVALID_ARGUMENT: chat template render error at line 2, column 13: 'nothing' is undefined");
  EXPECT_EQ(RenderError("{% set l = [] %}{{ l.append(1) }}"),
            "INVALID_ARGUMENT: chat template render error at line 1, column 21: access to attribute 'append' of "
            "'list' object is unsafe.");
  EXPECT_EQ(RenderError("{{ range(1000000) | length }}"),
            "INVALID_ARGUMENT: chat template render error at line 1, column 4: Range too big. The sandbox blocks "
            "ranges larger than MAX_RANGE (100000).");
}

TEST(TemplateErrors, RaiseExceptionCarriesTheTemplateMessage) {
  Json messages = Json::parse(R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])");
  std::string llama2 =
      "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
      "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
      "{% endif %}{{ message['content'] }}{% endfor %}";
  EXPECT_EQ(RenderError(llama2, messages),
            "INVALID_ARGUMENT: chat template raised an exception at line 1, column 95: Conversation roles must "
            "alternate user/assistant/user/assistant/...");
}

TEST(TemplateErrors, RunawayTemplatesStopWithAnError) {
  std::string deep(5000, '(');
  EXPECT_NE(ParseError("{{ " + deep + std::string(5000, ')') + " }}").find("nesting is too deep"),
            std::string::npos);
  EXPECT_NE(ParseError("{{ " + deep + " }}").find("unexpected '}', expected ')'"), std::string::npos);
  std::string nested_ifs;
  for (int i = 0; i < 3000; ++i) nested_ifs += "{% if true %}";
  EXPECT_NE(ParseError(nested_ifs).find("nesting is too deep"), std::string::npos);
  EXPECT_NE(RenderError("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("recursion depth"),
            std::string::npos);
  EXPECT_NE(RenderError("{{ 'x' * 1000000000 }}").find("too large"), std::string::npos);
  RenderEnv small_budget;
  small_budget.max_steps = 20000;
  std::string exploding = RenderError(
      "{% macro f(n) %}{% for i in range(50) %}{{ f(n + 1) if n < 6 }}{% endfor %}{% endmacro %}{{ f(0) }}",
      Json::array(), small_budget);
  EXPECT_NE(exploding.find("step budget"), std::string::npos) << exploding;
}

}  // namespace
}  // namespace llmserve::jinja
