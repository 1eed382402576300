#include "deploy/pooler_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace llmserve::deploy::pooler_config_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A model directory in a temporary folder; sentence-transformers files on request.
class TempModelDir {
 public:
  TempModelDir() {
    std::string tmpl = (fs::temp_directory_path() / "llmserve_pooler_XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  ~TempModelDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // modules.json with a Pooling module in 1_Pooling whose config sets `mode`, and Normalize when `normalize`.
  void AddSentenceTransformers(const std::string& mode, bool normalize) {
    fs::create_directories(fs::path(dir_) / "1_Pooling");
    std::ofstream(fs::path(dir_) / "1_Pooling" / "config.json") << "{\"" << mode << "\": true}";
    std::ofstream(fs::path(dir_) / "modules.json")
        << "[{\"idx\": 0, \"path\": \"\", \"type\": \"sentence_transformers.models.Transformer\"},"
        << " {\"idx\": 1, \"path\": \"1_Pooling\", \"type\": \"sentence_transformers.models.Pooling\"}"
        << (normalize ? ", {\"idx\": 2, \"path\": \"2_Normalize\", \"type\": \"sentence_transformers.models.Normalize\"}"
                      : "")
        << "]";
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

StatusOr<proto::ModelConfig> Resolve(const PoolingRunnerFlags& flags, const std::string& dir = "/nonexistent") {
  proto::ModelConfig model;
  LLMSERVE_RETURN_IF_ERROR(ResolvePoolingRunner(flags, dir, &model));
  return model;
}

TEST(PoolerConfig, GenerationUnlessAskedAndVllmSpellingsOfEmbed) {
  EXPECT_FALSE(Resolve({}).value().has_pooler());
  EXPECT_FALSE(Resolve({.runner = "generate"}).value().has_pooler());
  for (const PoolingRunnerFlags& f : {PoolingRunnerFlags{.runner = "pooling"}, PoolingRunnerFlags{.convert = "embed"},
                                      PoolingRunnerFlags{.task = "embed"}}) {
    const proto::ModelConfig m = Resolve(f).value();
    ASSERT_TRUE(m.has_pooler());
    EXPECT_EQ(m.pooler().pooling_type(), "LAST");
    EXPECT_TRUE(m.pooler().normalize());
  }
}

TEST(PoolerConfig, PoolerConfigJsonOverridesAndBadValuesAreErrors) {
  const proto::ModelConfig m =
      Resolve({.runner = "pooling", .pooler_config = R"({"pooling_type": "MEAN", "normalize": false})"}).value();
  EXPECT_EQ(m.pooler().pooling_type(), "MEAN");
  EXPECT_FALSE(m.pooler().normalize());
  EXPECT_EQ(Resolve({.runner = "pooling", .pooler_config = R"({"pooling_type": "CLS"})",
                     .override_pooler_config = R"({"pooling_type": "MEAN"})"})
                .value()
                .pooler()
                .pooling_type(),
            "CLS");
  EXPECT_THAT(Resolve({.runner = "pooling", .pooler_config = R"({"pooling_type": "ALL"})"}).status().message(),
              HasSubstr("LAST"));
  EXPECT_THAT(Resolve({.runner = "pooling", .pooler_config = R"({"softmax": true})"}).status().message(),
              HasSubstr("softmax"));
  EXPECT_THAT(Resolve({.pooler_config = R"({"pooling_type": "MEAN"})"}).status().message(), HasSubstr("--runner pooling"));
  EXPECT_THAT(Resolve({.runner = "draft"}).status().message(), HasSubstr("draft"));
  EXPECT_THAT(Resolve({.convert = "classify"}).status().message(), HasSubstr("classif"));
  EXPECT_THAT(Resolve({.runner = "generate", .convert = "embed"}).status().message(), HasSubstr("choose one"));
}

TEST(PoolerConfig, SentenceTransformersFilesGiveTheDefaults) {
  TempModelDir dir;
  dir.AddSentenceTransformers("pooling_mode_mean_tokens", false);
  proto::ModelConfig m = Resolve({.runner = "pooling"}, dir.path()).value();
  EXPECT_EQ(m.pooler().pooling_type(), "MEAN");
  EXPECT_FALSE(m.pooler().normalize());
  dir.AddSentenceTransformers("pooling_mode_lasttoken", true);
  m = Resolve({.runner = "pooling", .pooler_config = R"({"normalize": false})"}, dir.path()).value();
  EXPECT_EQ(m.pooler().pooling_type(), "LAST");
  EXPECT_FALSE(m.pooler().normalize()) << "--pooler-config beats the model's files";
  dir.AddSentenceTransformers("pooling_mode_max_tokens", true);
  EXPECT_THAT(Resolve({.runner = "pooling"}, dir.path()).status().message(), HasSubstr("pooling modes"));
}

}  // namespace llmserve::deploy::pooler_config_test
