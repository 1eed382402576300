// ChatTemplate API: config shapes, template selection, the variables HF
// passes, key order, the injected clock, and errors in its inputs. The
// interpreter itself is tested in tests/jinja/.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/chat_template/chat_template.h"

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
            "NOT_FOUND: /nonexistent/dir is neither a directory nor a GGUF model");
}

// --chat-template: a file's contents, or the template itself (escapes
// decoded) when it looks like one; a path that does not open is an error.
TEST(ChatTemplateArgument, ReadsAFileOrTakesTheTemplateItself) {
  const std::string dir = ::testing::TempDir() + "/chat_template_argument";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jinja") << "{{ 'file\\n' }}";
  auto file = ResolveChatTemplateArgument(dir + "/t.jinja");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(*file, "{{ 'file\\n' }}");  // a file is taken as it is
  auto inline_template = ResolveChatTemplateArgument("{% for m in messages %}{{ m.content }}\\n{% endfor %}");
  ASSERT_TRUE(inline_template.ok());
  EXPECT_EQ(*inline_template, "{% for m in messages %}{{ m.content }}\n{% endfor %}");
  auto missing = ResolveChatTemplateArgument(dir + "/missing.jinja");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("looks like a file path"), std::string::npos);
  EXPECT_FALSE(ResolveChatTemplateArgument(dir).ok());  // a directory
}

TEST(ChatTemplateArgument, ReplacesTheModelsTemplateAndKeepsItsSpecialTokens) {
  const std::string dir = ::testing::TempDir() + "/chat_template_override";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/tokenizer_config.json")
      << R"({"bos_token": "<s>", "chat_template": "{{ 'model template' }}"})";
  auto t = ChatTemplate::FromModelDir(dir, {}, "{{ bos_token }}{{ messages[0].content }}");
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto text = t->Render(nlohmann::json::parse(R"([{"role": "user", "content": "hi"}])"), true, nullptr, nullptr);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "<s>hi");
  EXPECT_FALSE(ChatTemplate::FromModelDir(dir, {}, "{{ unclosed").ok());
}

}  // namespace
}  // namespace llmserve::frontend
