// --generation-config and --override-generation-config: where the server's
// sampling defaults come from.
#include "frontend/generation_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace llmserve::frontend {
namespace {

class GenerationConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("llmserve-genconfig-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(root_ / "model");
    std::filesystem::create_directories(root_ / "other");
    Write("model", R"({"temperature": 0.6, "top_p": 0.95, "top_k": 20, "eos_token_id": 2, "max_new_tokens": 512})");
    Write("other", R"({"temperature": 1.2, "repetition_penalty": 1.1})");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& dir, const std::string& json) {
    std::ofstream(root_ / dir / "generation_config.json") << json;
  }
  std::string Dir(const std::string& name) const { return (root_ / name).string(); }

  std::filesystem::path root_;
};

TEST_F(GenerationConfigTest, AutoReadsTheModelsFile) {
  auto d = LoadGenerationDefaults("auto", Dir("model"), "").value();
  EXPECT_EQ(d.temperature, 0.6);
  EXPECT_EQ(d.top_p, 0.95);
  EXPECT_EQ(d.top_k, 20);
  EXPECT_EQ(d.max_tokens, 512);
  EXPECT_FALSE(d.repetition_penalty.has_value());
}

TEST_F(GenerationConfigTest, VllmReadsNothingAndAFolderReadsItsFile) {
  auto none = LoadGenerationDefaults("vllm", Dir("model"), "").value();
  EXPECT_FALSE(none.temperature.has_value());
  EXPECT_FALSE(none.top_k.has_value());
  auto other = LoadGenerationDefaults(Dir("other"), Dir("model"), "").value();
  EXPECT_EQ(other.temperature, 1.2);
  EXPECT_EQ(other.repetition_penalty, 1.1);
  EXPECT_FALSE(other.top_p.has_value());
}

TEST_F(GenerationConfigTest, OverridesGoOnTop) {
  auto d = LoadGenerationDefaults("auto", Dir("model"), R"({"temperature": 0.0, "min_p": 0.1})").value();
  EXPECT_EQ(d.temperature, 0.0);
  EXPECT_EQ(d.min_p, 0.1);
  EXPECT_EQ(d.top_k, 20);
  auto v = LoadGenerationDefaults("vllm", Dir("model"), R"({"max_new_tokens": 64})").value();
  EXPECT_EQ(v.max_tokens, 64);
  EXPECT_FALSE(v.temperature.has_value());
}

TEST_F(GenerationConfigTest, BadSettingsAreErrors) {
  EXPECT_EQ(LoadGenerationDefaults(Dir("missing"), Dir("model"), "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadGenerationDefaults("auto", Dir("model"), "[1]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadGenerationDefaults("auto", Dir("model"), R"({"temperature": "hot"})").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace llmserve::frontend
