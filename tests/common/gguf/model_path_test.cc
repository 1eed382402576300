// GgufModelFile tells a GGUF model from a Hugging Face directory, on real
// files in a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "common/gguf/model_path.h"

namespace llmserve::common::gguf {
namespace {

namespace fs = std::filesystem;

void Touch(const fs::path& p) { std::ofstream(p) << "x"; }

TEST(GgufModelFile, TellsGgufFilesFromHuggingFaceDirectories) {
  const fs::path root = fs::temp_directory_path() / ("model_path_test_" + std::to_string(::getpid()));
  fs::create_directories(root / "hf");
  fs::create_directories(root / "one");
  fs::create_directories(root / "two");
  Touch(root / "hf" / "config.json");
  Touch(root / "hf" / "extra.gguf");  // config.json wins: a HF directory
  Touch(root / "one" / "m-Q8_0.gguf");
  Touch(root / "two" / "a.gguf");
  Touch(root / "two" / "b.gguf");
  Touch(root / "weights.bin");

  EXPECT_EQ(GgufModelFile((root / "hf").string()).value(), "");
  EXPECT_EQ(GgufModelFile((root / "one").string()).value(), (root / "one" / "m-Q8_0.gguf").string());
  EXPECT_EQ(GgufModelFile((root / "one" / "m-Q8_0.gguf").string()).value(), (root / "one" / "m-Q8_0.gguf").string());
  StatusOr<std::string> two = GgufModelFile((root / "two").string());
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("holds 2 .gguf files"), std::string::npos) << two.status().message();
  EXPECT_FALSE(GgufModelFile((root / "weights.bin").string()).ok());
  EXPECT_EQ(GgufModelFile((root / "missing").string()).status().code(), StatusCode::kNotFound);
  fs::remove_all(root);
}

}  // namespace
}  // namespace llmserve::common::gguf
