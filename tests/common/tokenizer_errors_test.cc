// Malformed or unsupported tokenizer files give clear errors naming the file,
// the JSON path and the offending type — never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/tokenizer/tokenizer.h"

namespace llmserve::common::tokenizer {
namespace {

using nlohmann::json;

json Minimal() {
  return {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}},
          {"pre_tokenizer", nullptr}, {"normalizer", nullptr}, {"decoder", nullptr},
          {"post_processor", nullptr}, {"added_tokens", json::array()}};
}

std::string ErrorOf(const json& tok, const std::string& config = "") {
  auto t = Tokenizer::FromJson(tok.dump(), config, "models/x");
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.status().message();
}

TEST(TokenizerErrors, MinimalLoads) {
  auto t = Tokenizer::FromJson(Minimal().dump(), "", "models/x");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->Encode("abab", false), (std::vector<int32_t>{2, 2}));
}

TEST(TokenizerErrors, NotJson) {
  auto t = Tokenizer::FromJson("{\"model\": [", "", "models/x");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "models/x/tokenizer.json: at /: not valid JSON");
}

TEST(TokenizerErrors, UnknownComponentTypes) {
  json j = Minimal();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", json::array({{{"type", "ByteLevel"}}, {{"type", "Fancy"}}})}};
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /pre_tokenizer/pretokenizers/1: "
                        "unsupported pre-tokenizer type \"Fancy\"");
  j = Minimal();
  j["normalizer"] = {{"type", "Precompiled"}};
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /normalizer: unsupported normalizer type \"Precompiled\"");
  j = Minimal();
  j["decoder"] = {{"type", "Sequence"}, {"decoders", json::array({{{"type", "CTC"}}})}};
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /decoder/decoders/0: unsupported decoder type \"CTC\"");
  j = Minimal();
  j["post_processor"] = {{"type", "BertProcessing"}};
  EXPECT_EQ(ErrorOf(j),
            "models/x/tokenizer.json: at /post_processor: unsupported post-processor type \"BertProcessing\"");
  j = Minimal();
  j["model"]["type"] = "Unigram";
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /model/type: unsupported model type \"Unigram\" (only BPE)");
}

TEST(TokenizerErrors, WrongShapes) {
  json j = Minimal();
  j.erase("model");
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /: missing required field \"model\"");
  j = Minimal();
  j["model"]["vocab"]["c"] = "three";
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /model/vocab: token \"c\" has an invalid id (string)");
  j = Minimal();
  j["model"]["merges"] = {"a c"};
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /model/merges/0: merge token \"c\" is not in the vocabulary");
  j = Minimal();
  j["model"]["merges"] = {42};
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /model/merges/0: expected \"a b\" or [\"a\", \"b\"], found number");
  j = Minimal();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  EXPECT_NE(ErrorOf(j).find("models/x/tokenizer.json: at /pre_tokenizer/pattern/Regex: invalid regular "
                            "expression \"(unclosed\": missing closing parenthesis"),
            std::string::npos);
  j = Minimal();
  j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "Sideways"}};
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /pre_tokenizer/behavior: unsupported split behavior \"Sideways\"");
  j = Minimal();
  j["added_tokens"] = json::array({{{"id", "7"}, {"content", "<x>"}}});
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /added_tokens/0/id: expected an integer, found string");
  j = Minimal();
  j["normalizer"] = "NFC";
  EXPECT_EQ(ErrorOf(j), "models/x/tokenizer.json: at /normalizer: expected a component object, found string");
}

TEST(TokenizerErrors, BadTokenizerConfig) {
  EXPECT_EQ(ErrorOf(Minimal(), R"({"chat_template": 5})"),
            "models/x/tokenizer_config.json: at /chat_template: expected a string or a list of {name, "
            "template}, found number");
  EXPECT_EQ(ErrorOf(Minimal(), R"({"add_bos_token": "yes"})"),
            "models/x/tokenizer_config.json: at /add_bos_token: expected a boolean, found string");
  EXPECT_EQ(ErrorOf(Minimal(), R"({"bos_token": "<s>", "add_bos_token": true, "tokenizer_class": "LlamaTokenizer"})"),
            "tokenizer_config.json: add_bos_token is set but bos_token \"<s>\" is not in the vocabulary");
}

TEST(TokenizerErrors, MissingFiles) {
  auto t = Tokenizer::FromDirectory("/nonexistent/model");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "tokenizer directory /nonexistent/model does not exist");
  const auto dir = std::filesystem::temp_directory_path() / "llmserve_tokenizer_errors_test";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / "tokenizer.json");
  t = Tokenizer::FromDirectory(dir.string());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("tokenizer.json: not found"), std::string::npos);
  std::ofstream(dir / "tokenizer.json") << Minimal().dump();
  std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template": [{"name": "default", "template": "T"},
      {"name": "tool_use", "template": "U"}], "eos_token": {"__type": "AddedToken", "content": "b"}})";
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": [1, 2], "bos_token_id": 0})";
  t = Tokenizer::FromDirectory(dir.string());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->chat_template(), "T");
  EXPECT_EQ((*t)->config().named_chat_templates.at("tool_use"), "U");
  EXPECT_EQ((*t)->eos_token_ids(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ((*t)->bos_token_id(), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmserve::common::tokenizer
