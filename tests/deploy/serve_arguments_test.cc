#include "deploy/serve_arguments.h"

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/flags.h"
#include "deploy/engine_flags.h"
#include "deploy/model_argument.h"
#include "deploy/serve_command.h"

namespace llmserve::deploy::serve_arguments_test {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

bool PortAndMaxNumSeqsAreOurs(const std::string& name) { return name == "port" || name == "max-num-seqs"; }
ListStyle ListStyleOfTwoFlags(const std::string& name) {
  return PortAndMaxNumSeqsAreOurs(name) ? ListStyle::kSingleValue : ListStyle::kSeparateValues;
}

// A YAML file in a temporary directory.
class ConfigFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "llmserve_serve_args_XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Write(const std::string& yaml) {
    const std::string path = dir_ + "/serve.yaml";
    std::ofstream(path) << yaml;
    return path;
  }
  std::string dir_;
};

using ServeArgumentsTest = ConfigFixture;

TEST_F(ServeArgumentsTest, ConfigComesFirstSoTheCommandLineWins) {
  const std::string path = Write("port: 1\nswap-space: 4\nmodel: cfg/model\n");
  auto out = PrepareServeArguments({"MODEL", "--config", path, "--port", "2"}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(out->args, ElementsAre("--port=1", "MODEL", "--port", "2"));
  EXPECT_EQ(out->model, "cfg/model");
  EXPECT_THAT(out->warnings, ElementsAre(HasSubstr("--swap-space has no effect")));
}

TEST_F(ServeArgumentsTest, ModelFlagWinsOverTheConfigsModel) {
  const std::string path = Write("model: cfg/model\n");
  auto out = PrepareServeArguments({"--config=" + path, "--model", "flag/model"}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->args.empty());
  EXPECT_EQ(out->model, "flag/model");
}

TEST_F(ServeArgumentsTest, ListAtTheEndOfTheConfigDoesNotTakeTheModel) {
  const std::string path = Write("ignore-patterns: ['*.pt']\n");
  auto out = PrepareServeArguments({"--config", path, "MODEL"}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(out->args, ElementsAre("MODEL"));
}

TEST_F(ServeArgumentsTest, Errors) {
  const std::string path = Write("hf-overrides: {x: 1}\n");
  EXPECT_THAT(PrepareServeArguments({"--config", path}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags).status().message(),
              HasSubstr("--hf-overrides"));
  EXPECT_THAT(PrepareServeArguments({"--config", path, "--config", path}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags).status().message(),
              HasSubstr("--config may be given once"));
  EXPECT_THAT(PrepareServeArguments({"--config"}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags).status().message(),
              HasSubstr("--config needs a value"));
  EXPECT_THAT(PrepareServeArguments({"--config", dir_ + "/none.yaml"}, PortAndMaxNumSeqsAreOurs, ListStyleOfTwoFlags).status().message(),
              HasSubstr("cannot read"));
}

// Parses `args` (after PrepareServeArguments) with this binary's gflags, as InitProcess does.
void ParseWithGflags(const std::vector<std::string>& args) {
  std::vector<std::string> storage{"llmserve serve"};
  for (const auto& a : args) storage.push_back(common::NormalizeFlagArgument(a));
  std::vector<char*> pointers;
  for (auto& s : storage) pointers.push_back(s.data());
  int argc = static_cast<int>(pointers.size());
  char** argv = pointers.data();
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/false);
}

struct Parsed {
  ServeOptions options;
  proto::EngineConfig config;
};

Parsed ParseServe(const std::vector<std::string>& cli) {
  gflags::FlagSaver restore_defaults_after;
  auto prepared = PrepareServeArguments(cli, GflagsIsOurs, GflagsListStyle);
  EXPECT_TRUE(prepared.ok()) << prepared.status().message();
  Parsed p;
  if (!prepared.ok()) return p;
  ParseWithGflags(prepared->args);
  auto options = ServeOptionsFromFlags();
  EXPECT_TRUE(options.ok()) << options.status().message();
  if (options.ok()) p.options = *options;
  EXPECT_TRUE(EngineConfigFromFlags("/models/m", &p.config).ok());
  return p;
}

TEST_F(ServeArgumentsTest, ConfigFileParsesLikeTheSameFlags) {
  const std::string path = Write(
      "port: 9000\n"
      "max_num_seqs: 8\n"
      "no-enable-prefix-caching: true\n"
      "served-model-name: [tiny]\n"
      "dtype: half\n"
      "kv-cache-memory-bytes: 1G\n"
      "structured-outputs-config: {disable_any_whitespace: true}\n"
      "enable-auto-tool-choice: yes\n"
      "tool-call-parser: hermes\n"
      "swap-space: 4\n"
      "trust-remote-code: true\n");
  const Parsed from_file = ParseServe({"--config", path});
  const Parsed from_flags =
      ParseServe({"--port", "9000", "--max-num-seqs=8", "--no-enable-prefix-caching", "--served-model-name", "tiny",
                  "--dtype", "half", "--kv-cache-memory-bytes", "1G", "--structured-outputs-config",
                  R"({"disable_any_whitespace":true})", "--enable-auto-tool-choice", "--tool-call-parser=hermes",
                  "--swap-space", "4", "--trust-remote-code"});
  const Parsed defaults = ParseServe({});
  EXPECT_EQ(from_file.config.SerializeAsString(), from_flags.config.SerializeAsString());
  EXPECT_EQ(from_file.config.model().served_model_name(), "tiny");
  EXPECT_EQ(from_file.config.model().dtype(), "float16");
  EXPECT_EQ(from_file.config.scheduler().max_num_seqs(), 8u);
  EXPECT_FALSE(from_file.config.cache().enable_prefix_caching());
  EXPECT_EQ(from_file.config.cache().kv_cache_memory_bytes(), 1u << 30);
  EXPECT_NE(from_file.config.SerializeAsString(), defaults.config.SerializeAsString());
  EXPECT_TRUE(from_file.options == from_flags.options);
  EXPECT_EQ(from_file.options.port, 9000);
  EXPECT_TRUE(from_file.options.enable_auto_tool_choice);
  EXPECT_EQ(from_file.options.tool_call_parser, "hermes");
  EXPECT_FALSE(from_file.options == defaults.options);
}

TEST_F(ServeArgumentsTest, CommandLineOverridesTheConfigFile) {
  const std::string path = Write("max-num-seqs: 8\nport: 9000\n");
  const Parsed p = ParseServe({"--config", path, "--max-num-seqs", "4"});
  EXPECT_EQ(p.config.scheduler().max_num_seqs(), 4u);
  EXPECT_EQ(p.options.port, 9000);
}

TEST_F(ServeArgumentsTest, DownloadDirAndRevisionPickTheSnapshot) {
  const fs::path repo = fs::path(dir_) / "models--Org--M";
  fs::create_directories(repo / "snapshots" / "c0ffee");
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "v1") << "c0ffee\n";
  gflags::FlagSaver restore_defaults_after;
  ParseWithGflags({"--download-dir=" + dir_, "--revision", "v1"});
  auto model = ResolveModelArgument("Org/M");
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->dir, (repo / "snapshots" / "c0ffee").string());
  EXPECT_EQ(model->hf_id, "Org/M");
}

TEST(ServeArgumentsGflags, ServedModelNameDefaultsToTheHuggingFaceId) {
  proto::EngineConfig config;
  ASSERT_TRUE(EngineConfigFromFlags("/cache/models--Qwen--Qwen3-0.6B/snapshots/abc", &config, "Qwen/Qwen3-0.6B").ok());
  EXPECT_EQ(config.model().served_model_name(), "Qwen/Qwen3-0.6B");
  ASSERT_TRUE(EngineConfigFromFlags("/models/tiny/", &config).ok());
  EXPECT_EQ(config.model().served_model_name(), "tiny");
}

TEST_F(ServeArgumentsTest, LoadFormatReachesTheEngineOrIsAnError) {
  gflags::FlagSaver restore_defaults_after;
  proto::EngineConfig config;
  ASSERT_TRUE(EngineConfigFromFlags("/models/m", &config).ok());
  EXPECT_EQ(config.model().load_format(), "auto");
  ParseWithGflags({"--load-format", "dummy"});
  ASSERT_TRUE(EngineConfigFromFlags("/models/m", &config).ok());
  EXPECT_EQ(config.model().load_format(), "dummy");
  ParseWithGflags({"--load-format=pt"});
  const Status pt = EngineConfigFromFlags("/models/m", &config);
  EXPECT_EQ(pt.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(pt.message().find("--load-format must be auto, safetensors or dummy, got 'pt'"), std::string::npos)
      << pt.message();
}

}  // namespace llmserve::deploy::serve_arguments_test
