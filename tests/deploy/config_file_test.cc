#include "deploy/config_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace llmserve::deploy::config_file_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// "port", "served-model-name", ... stand for our one-value flags; "comma-list" for a comma-separated one.
ListStyle ListStyleOfSampleFlags(const std::string& name) {
  if (name == "comma-list") return ListStyle::kCommaJoined;
  for (const char* ours : {"port", "served-model-name", "enforce-eager", "dtype", "max-num-batched-tokens"})
    if (name == ours) return ListStyle::kSingleValue;
  return ListStyle::kSeparateValues;
}

StatusOr<ConfigFileArgs> Convert(const std::string& yaml) {
  return ConfigArgsFromYaml(yaml, "cfg.yaml", ListStyleOfSampleFlags);
}

TEST(ConfigFile, EachKindOfValue) {
  auto out = Convert(
      "# a vLLM serve config\n"
      "port: 8000\n"
      "enforce-eager: true\n"
      "trust_remote_code: false\n"
      "swap-space: null\n"
      "ignore-patterns: [\"*.pt\", '*.bin']\n"
      "compilation-config: {level: 3, sizes: [1, 2], name: x, frac: 0.5, eager: yes, none: ~}\n"
      "served-model-name:\n"
      "  - tiny\n"
      "dtype: 'half'\n"
      "comma-list: [a, b]\n"
      "max-num-batched-tokens: 8_192\n"
      "model: Qwen/Qwen3-0.6B\n");
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(out->args,
              ElementsAre("--port=8000", "--enforce-eager", "--ignore-patterns", "*.pt", "*.bin",
                          R"(--compilation-config={"eager":true,"frac":0.5,"level":3,"name":"x","none":null,"sizes":[1,2]})",
                          "--served-model-name=tiny", "--dtype=half", "--comma-list=a,b",
                          "--max-num-batched-tokens=8192"));
  EXPECT_EQ(out->model, "Qwen/Qwen3-0.6B");
}

TEST(ConfigFile, Yaml11BooleansAndQuotedStrings) {
  auto out = Convert("enforce-eager: on\nx: 'yes'\ny: \"true\"\nz: NO\n");
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(out->args, ElementsAre("--enforce-eager", "--x=yes", "--y=true"));
}

TEST(ConfigFile, EmptyFileSetsNothing) {
  auto out = Convert("# nothing\n");
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->args.empty());
  EXPECT_TRUE(out->model.empty());
}

TEST(ConfigFile, ListForOneValueFlagIsAnErrorWithItsLine) {
  auto out = Convert("port: 1\nserved-model-name: [a, b]\n");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              HasSubstr("cfg.yaml:2: 'served-model-name' is a list of 2, but llmserve's --served-model-name "
                        "takes one value"));
}

TEST(ConfigFile, MalformedYamlNamesTheLine) {
  auto out = Convert("port: 8000\nhost: a: b\n");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("cfg.yaml:2: invalid YAML"));
  out = Convert("port: 8000\nlist: [1, 2\n");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("cfg.yaml:3: invalid YAML"));
}

TEST(ConfigFile, TopLevelMustBeAMapping) {
  auto out = Convert("\n\n- port\n- 8000\n");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("cfg.yaml:3: the top level must be a mapping"));
  out = Convert("just text\n");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("cfg.yaml:1: the top level must be a mapping"));
}

TEST(ConfigFile, BadEntriesAreErrors) {
  EXPECT_THAT(Convert("a: 1\nmodel: [x]\n").status().message(), HasSubstr("cfg.yaml:2: 'model' must name"));
  EXPECT_THAT(Convert("config: other.yaml\n").status().message(), HasSubstr("cannot name another config"));
  EXPECT_THAT(Convert("x: []\n").status().message(), HasSubstr("cfg.yaml:1: 'x' is an empty list"));
  EXPECT_THAT(Convert("x: [{a: 1}]\n").status().message(), HasSubstr("must be plain values"));
  EXPECT_THAT(Convert("[a]: 1\n").status().message(), HasSubstr("a key must be a flag name"));
}

TEST(ConfigFile, OnlyYamlFilesAreRead) {
  EXPECT_THAT(ReadConfigFile("serve.json", ListStyleOfSampleFlags).status().message(), HasSubstr("must be YAML"));
  EXPECT_THAT(ReadConfigFile("/nonexistent/serve.yaml", ListStyleOfSampleFlags).status().message(),
              HasSubstr("cannot read the file"));
}

}  // namespace llmserve::deploy::config_file_test
