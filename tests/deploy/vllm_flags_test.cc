#include "deploy/vllm_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace llmserve::deploy::vllm_flags_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Args = std::vector<std::string>;

// Stands for llmserve's own flags in these tests.
bool FakeOurs(const std::string& name) {
  for (const char* ours : {"port", "tensor-parallel-size", "data-parallel-size", "kv-cache-memory",
                           "enable-prefix-caching", "no-enable-prefix-caching"})
    if (name == ours) return true;
  return false;
}

struct Filtered {
  Status status;
  Args args;
  std::vector<std::string> warnings;
};

Filtered Filter(const Args& in) {
  Filtered f;
  std::set<std::string> warned;
  auto out = FilterVllmFlags(in, FakeOurs, &warned, &f.warnings);
  f.status = out.status();
  if (out.ok()) f.args = *out;
  return f;
}

TEST(VllmFlags, ValueFlagInEverySpellingIsDroppedWithOneWarning) {
  Filtered f = Filter({"--swap-space", "4", "--swap_space=8", "MODEL", "--port", "8000", "--swap-space=2"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("MODEL", "--port", "8000"));
  EXPECT_THAT(f.warnings, ElementsAre("--swap-space has no effect on llmserve: no CPU swap space: preempted "
                                      "requests are recomputed, as in vLLM V1"));
}

TEST(VllmFlags, FlagsWithoutValuesLeaveTheNextArgument) {
  Filtered f = Filter({"--trust-remote-code", "MODEL", "--no-enable-dbo", "--enable_dbo", "--port=1"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("MODEL", "--port=1"));
  ASSERT_EQ(f.warnings.size(), 3u);
  EXPECT_THAT(f.warnings[0], HasSubstr("--trust-remote-code has no effect on llmserve: no model code"));
  EXPECT_THAT(f.warnings[1], HasSubstr("--no-enable-dbo has no effect"));
  EXPECT_THAT(f.warnings[2], HasSubstr("--enable-dbo has no effect"));
}

TEST(VllmFlags, ListAndOptionalValues) {
  Filtered f = Filter({"--ignore-patterns", "*.pt", "*.bin", "--port", "1", "--hf-token", "--hf-token", "tok", "M"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("--port", "1", "M"));
  EXPECT_EQ(f.warnings.size(), 2u);  // one per flag, however often given
}

TEST(VllmFlags, DottedKeysAndGluedCompilationLevel) {
  Filtered f = Filter({"-O3", "--compilation-config.level", "3", "-O", "{}", "M"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("M"));
  EXPECT_THAT(f.warnings, ElementsAre(HasSubstr("--compilation-config has no effect")));
}

TEST(VllmFlags, AliasesBecomeOurFlags) {
  Filtered f = Filter({"-tp", "2", "-dp=4", "--kv-cache-memory-bytes", "4G", "--kv_cache_memory_bytes=1G"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("--tensor-parallel-size", "2", "--data-parallel-size=4", "--kv-cache-memory", "4G",
                                  "--kv-cache-memory=1G"));
  EXPECT_TRUE(f.warnings.empty());
}

TEST(VllmFlags, OurFlagsWinOverTheTables) {
  std::set<std::string> warned;
  std::vector<std::string> warnings;
  auto ours_too = [](const std::string& name) { return name == "swap-space"; };
  auto out = FilterVllmFlags({"--swap-space", "4"}, ours_too, &warned, &warnings);
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(*out, ElementsAre("--swap-space", "4"));
  EXPECT_TRUE(warnings.empty());
}

TEST(VllmFlags, UnknownFlagsAndEverythingAfterDoubleDashPassThrough) {
  Filtered f = Filter({"--no-such-flag", "x", "-v", "--", "--swap-space", "--enable-lora"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("--no-such-flag", "x", "-v", "--", "--swap-space", "--enable-lora"));
  EXPECT_TRUE(f.warnings.empty());
}

TEST(VllmFlags, RejectedFlagsAreErrors) {
  Filtered f = Filter({"M", "--hf-overrides", "{\"x\": 1}"});
  EXPECT_EQ(f.status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(f.status.message(), HasSubstr("--hf-overrides {\"x\": 1} is not supported by "
                                            "llmserve yet: overriding the model's config"));
  EXPECT_THAT(Filter({"--enable-sleep-mode"}).status.message(), HasSubstr("sleep mode"));
  EXPECT_THAT(Filter({"-pp", "2"}).status.message(),
              HasSubstr("--pipeline-parallel-size 2 is not supported by llmserve yet: pipeline parallelism "
                        "(accepted: 1)"));
}

TEST(VllmFlags, RejectedFlagsAskingForTheDefaultAreWarnings) {
  Filtered f = Filter({"--no-enable-sleep-mode", "-pp", "1", "--model-impl=auto", "--tokenizer-mode", "auto", "M"});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_THAT(f.args, ElementsAre("M"));
  EXPECT_THAT(f.warnings, ElementsAre("--no-enable-sleep-mode has no effect on llmserve: llmserve does that anyway",
                                      "--pipeline-parallel-size 1 has no effect on llmserve: llmserve does that anyway",
                                      "--model-impl auto has no effect on llmserve: llmserve does that anyway",
                                      "--tokenizer-mode auto has no effect on llmserve: llmserve does that anyway"));
}

TEST(VllmFlags, MissingValuesAreErrors) {
  EXPECT_THAT(Filter({"--swap-space"}).status.message(), HasSubstr("--swap-space needs a value"));
  EXPECT_THAT(Filter({"--swap-space", "--port", "1"}).status.message(), HasSubstr("needs a value"));
  EXPECT_THAT(Filter({"--ignore-patterns"}).status.message(), HasSubstr("needs at least one value"));
  Filtered negative = Filter({"--swap-space", "-1", "M"});  // a negative number is a value, as in argparse
  ASSERT_TRUE(negative.status.ok()) << negative.status.message();
  EXPECT_THAT(negative.args, ElementsAre("M"));
}

TEST(VllmFlags, WarnedSetCarriesAcrossCalls) {
  std::set<std::string> warned;
  std::vector<std::string> warnings;
  ASSERT_TRUE(FilterVllmFlags({"--swap-space", "1"}, FakeOurs, &warned, &warnings).ok());
  ASSERT_TRUE(FilterVllmFlags({"--swap-space=2"}, FakeOurs, &warned, &warnings).ok());
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(VllmFlags, TablesAreSortedWithoutDuplicates) {
  std::set<std::string_view> names;
  std::string_view previous;
  for (const auto& row : NoEffectVllmFlags()) {
    EXPECT_LT(previous, row.name);
    previous = row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
  }
  previous = {};
  for (const auto& row : RejectedVllmFlags()) {
    EXPECT_LT(previous, row.name);
    previous = row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " is in both tables";
  }
}

}  // namespace llmserve::deploy::vllm_flags_test
