// Chat-template conformance: every (model, conversation) pair rendered by
// frontend's ChatTemplate over the jinja library must be byte-identical to
// jinja2's render as Hugging Face does it (reference_render.py, run by ctest
// as a fixture just before these tests), or both must raise. One ctest entry
// per pair. snippet_conformance_test.cc checks the jinja library alone.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/chat_template/chat_template.h"
#include "tests/jinja/conformance/conformance_util.h"

namespace llmserve::jinja::conformance {
namespace {

using frontend::ChatTemplate;
using frontend::ChatTemplateOptions;

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
  if (std::string why = MissingReferences(); !why.empty()) GTEST_SKIP() << why;
  const Json& refs = References();
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

}  // namespace
}  // namespace llmserve::jinja::conformance
