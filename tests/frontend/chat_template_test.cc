// ChatTemplate API: config shapes, template selection, variables HF passes,
// key order, thread safety, and Python-compatible value printing.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/chat_template/chat_template.h"
#include "jinja/py_format.h"

namespace llmserve::frontend {
namespace {

using Json = nlohmann::ordered_json;

std::string Render(const std::string& source, const Json& messages = Json::array(), const Json& kwargs = Json(),
                   const Json& tools = Json(), bool add_generation_prompt = true) {
  auto t = ChatTemplate::FromSource(source, {{"bos_token", "<s>"}, {"eos_token", "</s>"}});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  auto r = t->Render(messages, add_generation_prompt, tools, kwargs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : "";
}

TEST(ChatTemplate, RendersMessagesWithHfVariables) {
  Json messages = Json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])");
  EXPECT_EQ(Render("{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m['content'] }}]{% endfor %}"
                   "{% if add_generation_prompt %}{{ eos_token }}{% endif %}|{{ tools is none }}|{{ documents }}",
                   messages),
            "<s>[system:S][user:U]</s>|True|None");
}

TEST(ChatTemplate, KwargsBecomeVariables) {
  std::string src = "{% if enable_thinking is defined and enable_thinking is false %}off{% else %}on{% endif %}";
  EXPECT_EQ(Render(src), "on");
  EXPECT_EQ(Render(src, Json::array(), Json({{"enable_thinking", false}})), "off");
  EXPECT_EQ(Render(src, Json::array(), Json({{"enable_thinking", true}})), "on");
  // A kwarg may replace a special token, as in HF.
  EXPECT_EQ(Render("{{ bos_token }}", Json::array(), Json({{"bos_token", "<B>"}})), "<B>");
}

TEST(ChatTemplate, TojsonKeepsRequestKeyOrder) {
  Json tools = Json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}}])");
  EXPECT_EQ(Render("{{ tools[0] | tojson }}", Json::array(), Json(), tools),
            R"({"type": "function", "function": {"name": "f", "parameters": {"z": 1, "a": 2}}})");
  // nlohmann::json inputs have their keys sorted before we see them.
  auto t = ChatTemplate::FromSource("{{ tools[0].function.parameters | tojson }}", {});
  ASSERT_TRUE(t.ok());
  auto r = t->Render(nlohmann::json::array(), false, nlohmann::json::parse(tools.dump()), nlohmann::json());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, R"({"a": 2, "z": 1})");
}

TEST(ChatTemplate, SpecialTokensFromConfigStringsAndObjects) {
  Json config = Json::parse(R"({
    "chat_template": "{{ bos_token }}|{{ eos_token }}|{{ unk_token is defined }}|{{ pad_token }}",
    "bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>", "lstrip": false},
    "eos_token": "</s>", "unk_token": null, "pad_token": {"content": "<pad>"}})");
  auto t = ChatTemplate::FromTokenizerConfig(config);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto r = t->Render(Json::array(), false, Json(), Json());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "<｜begin▁of▁sentence｜>|</s>|False|<pad>");
}

TEST(ChatTemplate, NamedTemplatesFollowHfSelection) {
  Json config = Json::parse(R"({"chat_template": [
    {"name": "default", "template": "default"}, {"name": "tool_use", "template": "tools"},
    {"name": "rag", "template": "rag"}]})");
  auto t = ChatTemplate::FromTokenizerConfig(config);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->Render(Json::array(), false, Json(), Json()), "default");
  EXPECT_EQ(*t->Render(Json::array(), false, Json::array(), Json()), "tools");
  ChatTemplateOptions options;
  options.template_name = "rag";
  auto rag = ChatTemplate::FromTokenizerConfig(config, options);
  EXPECT_EQ(*rag->Render(Json::array(), false, Json::array(), Json()), "rag");
  options.template_name = "missing";
  auto missing = ChatTemplate::FromTokenizerConfig(config, options);
  EXPECT_EQ(missing->Render(Json::array(), false, Json(), Json()).status().ToString(),
            "NOT_FOUND: no chat template named 'missing'");
  EXPECT_EQ(t->TemplateNames(), (std::vector<std::string>{"default", "rag", "tool_use"}));
}

TEST(ChatTemplate, FromModelDirPrefersChatTemplateJinja) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("llmserve_ct_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": "from config {{ eos_token }}", "eos_token": "E"})";
  auto from_config = ChatTemplate::FromModelDir(dir.string());
  ASSERT_TRUE(from_config.ok()) << from_config.status().ToString();
  EXPECT_EQ(*from_config->Render(Json::array(), false, Json(), Json()), "from config E");
  std::ofstream(dir / "chat_template.jinja") << "from jinja file {{ eos_token }}\n";
  auto from_file = ChatTemplate::FromModelDir(dir.string());
  ASSERT_TRUE(from_file.ok());
  EXPECT_EQ(*from_file->Render(Json::array(), false, Json(), Json()), "from jinja file E");
  fs::remove_all(dir);
}

TEST(ChatTemplate, StrftimeNowUsesTheInjectedClock) {
  ChatTemplateOptions options;
  options.now = [] {
    std::tm tm{};
    tm.tm_year = 124;
    tm.tm_mon = 0;
    tm.tm_mday = 5;
    tm.tm_wday = 5;
    return tm;
  };
  auto t = ChatTemplate::FromSource("{{ strftime_now('%d %b %Y') }}", {}, options);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->Render(Json::array(), false, Json(), Json()), "05 Jan 2024");
}

TEST(ChatTemplate, ConcurrentRendersAgree) {
  std::string src =
      "{%- set ns = namespace(n=0) -%}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
      "<|{{ m.role }}|>{{ m.content | trim }}{{ loop.index }}/{{ ns.n }}{% endfor %}{{ tools | tojson }}";
  auto t = ChatTemplate::FromSource(src, {});
  ASSERT_TRUE(t.ok());
  std::vector<Json> inputs;
  std::vector<std::string> want;
  for (int i = 0; i < 8; ++i) {
    Json messages = Json::array();
    for (int j = 0; j <= i; ++j) messages.push_back({{"role", j % 2 ? "assistant" : "user"}, {"content", " m" + std::to_string(j)}});
    inputs.push_back(messages);
    want.push_back(*t->Render(messages, true, Json::array({{{"n", i}}}), Json()));
  }
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&, th] {
      for (int k = 0; k < 200; ++k) {
        int i = (th + k) % 8;
        auto r = t->Render(inputs[i], true, Json::array({{{"n", i}}}), Json());
        if (!r.ok() || *r != want[i]) ++mismatches[th];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(ChatTemplate, SelfReferencesDoNotBreakRendering) {
  // Macros held by their own scope and namespaces holding themselves are
  // reference cycles; the sanitizer build checks they are freed.
  EXPECT_EQ(Render("{% macro m(n) %}{{ n }}{% if n %}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(2) }}"
                   "{% set ns = namespace() %}{% set ns.me = ns %}{% set ns.list = [ns] %}{{ ns.me.list | length }}"),
            "2101");
  auto t = ChatTemplate::FromSource("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", {});
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t->Render(Json::array(), false, Json(), Json()).status().message().find("recursion depth"),
            std::string::npos);
}

TEST(PyFormat, FloatsPrintLikePython) {
  using jinja::FormatFloat;
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
  using jinja::ReprString;
  EXPECT_EQ(ReprString("it's"), "\"it's\"");
  EXPECT_EQ(ReprString("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(ReprString("a\nb\\"), "'a\\nb\\\\'");
  EXPECT_EQ(ReprString("\xc2\xa0\xe2\x80\x8b\xf0\x9f\x98\x80"), "'\\xa0\\u200b\xf0\x9f\x98\x80'");
}

}  // namespace
}  // namespace llmserve::frontend
