// Bad templates and bad template inputs give clear errors that name the
// template position; none of them crash.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/chat_template/chat_template.h"

namespace llmserve::frontend {
namespace {

using Json = nlohmann::ordered_json;

std::string ParseError(const std::string& source) {
  auto t = ChatTemplate::FromSource(source, {});
  EXPECT_FALSE(t.ok()) << "parsed: " << source;
  return t.ok() ? "" : t.status().ToString();
}

std::string RenderError(const std::string& source, const Json& messages = Json::array()) {
  auto t = ChatTemplate::FromSource(source, {{"bos_token", "<s>"}});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return "";
  auto r = t->Render(messages, true, Json(), Json());
  EXPECT_FALSE(r.ok()) << "rendered: " << (r.ok() ? *r : "");
  return r.ok() ? "" : r.status().ToString();
}

TEST(ChatTemplateErrors, SyntaxErrorsNameLineAndColumn) {
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

TEST(ChatTemplateErrors, UnsupportedSyntaxIsNamed) {
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

TEST(ChatTemplateErrors, RenderErrorsNamePosition) {
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

TEST(ChatTemplateErrors, RaiseExceptionCarriesTheTemplateMessage) {
  Json messages = Json::parse(R"([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])");
  std::string llama2 =
      "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
      "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
      "{% endif %}{{ message['content'] }}{% endfor %}";
  EXPECT_EQ(RenderError(llama2, messages),
            "INVALID_ARGUMENT: chat template raised an exception at line 1, column 95: Conversation roles must "
            "alternate user/assistant/user/assistant/...");
}

TEST(ChatTemplateErrors, RunawayTemplatesStopWithAnError) {
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
  ChatTemplateOptions small_budget;
  small_budget.max_render_steps = 20000;
  auto exploding = ChatTemplate::FromSource(
      "{% macro f(n) %}{% for i in range(50) %}{{ f(n + 1) if n < 6 }}{% endfor %}{% endmacro %}{{ f(0) }}", {},
      small_budget);
  ASSERT_TRUE(exploding.ok());
  auto r = exploding->Render(Json::array(), false, Json(), Json());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("step budget"), std::string::npos) << r.status().ToString();
}

TEST(ChatTemplateErrors, BadRenderInputs) {
  auto t = ChatTemplate::FromSource("{{ messages }}", {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Render(Json::object(), true, Json(), Json()).status().message(), "messages must be an array");
  EXPECT_EQ(t->Render(Json::array(), true, Json("x"), Json()).status().message(), "tools must be an array or null");
  EXPECT_EQ(t->Render(Json::array(), true, Json(), Json::array()).status().message(),
            "chat_template_kwargs must be an object");
  EXPECT_EQ(t->Render(Json::array(), true, Json(), Json({{"messages", 1}})).status().message(),
            "chat_template_kwargs may not set 'messages'");
}

TEST(ChatTemplateErrors, BadTokenizerConfigs) {
  EXPECT_EQ(ChatTemplate::FromTokenizerConfig(Json::parse(R"({"eos_token": "</s>"})")).status().ToString(),
            "NOT_FOUND: tokenizer_config.json has no chat_template");
  EXPECT_EQ(ChatTemplate::FromTokenizerConfig(Json::parse(R"({"chat_template": 5})")).status().ToString(),
            "INVALID_ARGUMENT: tokenizer_config.json: chat_template must be a string or a list of {name, template}");
  EXPECT_EQ(ChatTemplate::FromTokenizerConfig(Json::parse(R"({"chat_template": [{"name": "x"}]})")).status().ToString(),
            "INVALID_ARGUMENT: tokenizer_config.json: chat_template[0] must be an object with string 'name' and "
            "'template'");
  EXPECT_EQ(ChatTemplate::FromTokenizerConfig(Json::parse(R"({"chat_template": "x", "bos_token": 3})")).status().ToString(),
            "INVALID_ARGUMENT: tokenizer_config.json: bos_token must be a string or an object with a string "
            "'content'");
  EXPECT_EQ(ChatTemplate::FromTokenizerConfig(Json::parse(R"({"chat_template": [{"name": "tool_use", "template": "{% if %}"}]})"))
                .status()
                .ToString(),
            "INVALID_ARGUMENT: chat template 'tool_use': chat template syntax error at line 1, column 7: Expected "
            "an expression, got 'end of statement block'");
  EXPECT_EQ(ChatTemplate::FromModelDir("/nonexistent/dir").status().ToString(),
            "NOT_FOUND: /nonexistent/dir is not a directory");
}

}  // namespace
}  // namespace llmserve::frontend
