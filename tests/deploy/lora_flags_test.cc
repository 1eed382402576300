// --enable-lora, --lora-modules (several values, name=path or JSON),
// --max-loras, --max-lora-rank, --max-cpu-loras: parsed as vLLM's, checked
// early with errors that name the flag.
#include "deploy/lora_flags.h"

#include <gflags/gflags.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/flags.h"
#include "deploy/engine_flags.h"
#include "deploy/serve_arguments.h"

namespace llmserve::deploy::lora_flags_test {
namespace {

using ::testing::HasSubstr;

// The engine config `llmserve serve` would build from `cli`, or its error.
StatusOr<proto::EngineConfig> Serve(const std::vector<std::string>& cli) {
  gflags::FlagSaver restore_defaults_after;
  auto prepared = PrepareServeArguments(cli, GflagsIsOurs, GflagsListStyle);
  if (!prepared.ok()) return prepared.status();
  std::vector<std::string> storage{"llmserve serve"};
  for (const auto& a : prepared->args) storage.push_back(common::NormalizeFlagArgument(a));
  std::vector<char*> pointers;
  for (auto& s : storage) pointers.push_back(s.data());
  int argc = static_cast<int>(pointers.size());
  char** argv = pointers.data();
  gflags::ParseCommandLineFlags(&argc, &argv, /*remove_flags=*/false);
  proto::EngineConfig config;
  LLMSERVE_RETURN_IF_ERROR(EngineConfigFromFlags("/models/base", &config));
  return config;
}

std::string Error(const std::vector<std::string>& cli) {
  auto c = Serve(cli);
  EXPECT_FALSE(c.ok());
  return c.ok() ? "" : c.status().message();
}

TEST(LoraFlags, DefaultsAreVllms) {
  auto c = Serve({});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->lora().enable_lora());
  EXPECT_EQ(c->lora().max_loras(), 1u);
  EXPECT_EQ(c->lora().max_lora_rank(), 16u);
  EXPECT_EQ(c->lora().max_cpu_loras(), 1u);
  EXPECT_EQ(c->lora().modules_size(), 0);
}

TEST(LoraFlags, SeveralModulesInBothFormsAndRepeatedFlags) {
  auto c = Serve({"--enable-lora", "--lora-modules", "sql=/a/sql",
                  R"({"name": "chat", "path": "/a/chat", "base_model_name": "qwen"})", "--max-loras", "2",
                  "--max_lora_rank=64", "--lora-modules=math=/a/m=1", "--max-cpu-loras", "4"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& l = c->lora();
  EXPECT_TRUE(l.enable_lora());
  EXPECT_EQ(l.max_loras(), 2u);
  EXPECT_EQ(l.max_lora_rank(), 64u);
  EXPECT_EQ(l.max_cpu_loras(), 4u);
  ASSERT_EQ(l.modules_size(), 3);
  EXPECT_EQ(l.modules(0).name(), "sql");
  EXPECT_EQ(l.modules(0).path(), "/a/sql");
  EXPECT_EQ(l.modules(0).base_model_name(), "");
  EXPECT_EQ(l.modules(1).name(), "chat");
  EXPECT_EQ(l.modules(1).base_model_name(), "qwen");
  EXPECT_EQ(l.modules(2).name(), "math");
  EXPECT_EQ(l.modules(2).path(), "/a/m=1");  // split at the first '='
}

TEST(LoraFlags, ModulesAfterTheModelStopAtTheNextPlainArgument) {
  EXPECT_EQ(JoinLoraModuleArgs({"--lora-modules", "a=/x", "b=/y", "MODEL", "--port", "1"}),
            (std::vector<std::string>{"--lora-modules=a=/x\nb=/y", "MODEL", "--port", "1"}));
}

TEST(LoraFlags, BadValuesNameTheFlag) {
  EXPECT_THAT(Error({"--max-lora-rank", "12"}), HasSubstr("--max-lora-rank (12) must be one of 1, 8, 16"));
  EXPECT_THAT(Error({"--max-loras", "0"}), HasSubstr("--max-loras must be at least 1"));
  EXPECT_THAT(Error({"--max-loras", "4", "--max-cpu-loras", "2"}),
              HasSubstr("--max-cpu-loras (2) must be at least --max-loras (4)"));
  EXPECT_THAT(Error({"--lora-modules", "a=/x"}), HasSubstr("--lora-modules needs --enable-lora"));
  EXPECT_THAT(Error({"--enable-lora", "--lora-modules", "a=/x", "a=/y"}), HasSubstr("'a' is given twice"));
  EXPECT_THAT(Error({"--enable-lora", "--lora-modules", "base=/x"}), HasSubstr("is the served model's name"));
  EXPECT_THAT(Error({"--enable-lora", "--lora-modules", R"({"name": "a"})"}), HasSubstr("\"path\" (a string) is required"));
  EXPECT_THAT(Error({"--enable-lora", "--lora-modules", "{oops=1"}), HasSubstr("not valid JSON"));
  std::vector<proto::LoraModule> m;
  EXPECT_THAT(ParseLoraModules("noequals", &m).message(), HasSubstr("neither name=path nor JSON"));
}

}  // namespace
}  // namespace llmserve::deploy::lora_flags_test
