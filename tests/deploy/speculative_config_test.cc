#include "deploy/speculative_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace llmserve::deploy {
namespace speculative_config_test {

using ::testing::HasSubstr;

proto::SpeculativeConfig Parsed(const std::string& json) {
  proto::SpeculativeConfig c;
  const Status s = ParseSpeculativeConfig(json, &c);
  EXPECT_TRUE(s.ok()) << s.message();
  return c;
}

std::string Error(const std::string& json) {
  proto::SpeculativeConfig c;
  const Status s = ParseSpeculativeConfig(json, &c);
  EXPECT_FALSE(s.ok()) << json;
  return std::string(s.message());
}

TEST(SpeculativeConfig, NgramWithVllmDefaults) {
  EXPECT_TRUE(Parsed("").method().empty());
  auto c = Parsed(R"({"method": "ngram", "num_speculative_tokens": 4})");
  EXPECT_EQ(c.method(), "ngram");
  EXPECT_EQ(c.num_speculative_tokens(), 4u);
  EXPECT_EQ(c.prompt_lookup_min(), 5u);
  EXPECT_EQ(c.prompt_lookup_max(), 5u);
  c = Parsed(R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 3})");
  EXPECT_EQ(c.prompt_lookup_min(), 3u);
  c = Parsed(R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 2})");
  EXPECT_EQ(c.prompt_lookup_max(), 2u);
  c = Parsed(R"({"model": "[ngram]", "num_speculative_tokens": 3, "prompt_lookup_min": 1, "prompt_lookup_max": 4})");
  EXPECT_EQ(c.method(), "ngram");
  EXPECT_EQ(c.prompt_lookup_min(), 1u);
  EXPECT_EQ(c.prompt_lookup_max(), 4u);
}

TEST(SpeculativeConfig, OtherMethodsNameWhatIsSupported) {
  for (const char* m : {"suffix", "draft_model", "eagle", "eagle3", "mtp", "deepseek_mtp"}) {
    const std::string e = Error(std::string(R"({"method": ")") + m + R"(", "num_speculative_tokens": 2})");
    EXPECT_THAT(e, HasSubstr(std::string("method \"") + m + "\" is not supported yet"));
    EXPECT_THAT(e, HasSubstr("llmserve implements method \"ngram\""));
  }
  EXPECT_THAT(Error(R"({"method": "magic", "num_speculative_tokens": 2})"), HasSubstr("unknown method \"magic\""));
  EXPECT_THAT(Error(R"({"model": "org/draft-0.5b", "num_speculative_tokens": 2})"),
              HasSubstr("method \"draft_model\" is not supported yet"));
  EXPECT_THAT(Error(R"({"num_speculative_tokens": 2})"), HasSubstr("method is required"));
}

TEST(SpeculativeConfig, BadValuesAreErrors) {
  EXPECT_THAT(Error(R"({"method": "ngram"})"), HasSubstr("num_speculative_tokens is required"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 0})"),
              HasSubstr("num_speculative_tokens must be an integer from 1"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": "4"})"),
              HasSubstr("num_speculative_tokens must be an integer"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 0})"),
              HasSubstr("prompt_lookup_min must be an integer from 1"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 4, "prompt_lookup_max": 2})"),
              HasSubstr("prompt_lookup_min=4 must be <= prompt_lookup_max=2"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 2, "draft_tensor_parallel_size": 1})"),
              HasSubstr("key \"draft_tensor_parallel_size\" is not supported"));
  EXPECT_THAT(Error("ngram"), HasSubstr("must be a JSON object"));
  EXPECT_THAT(Error(R"({"method": "ngram", "model": "org/x", "num_speculative_tokens": 2})"),
              HasSubstr("does not go with method ngram"));
}

TEST(SpeculativeConfig, DisableByBatchSize) {
  EXPECT_EQ(Parsed(R"({"method": "ngram", "num_speculative_tokens": 2})").disable_by_batch_size(), 0u);
  EXPECT_EQ(Parsed(R"({"method": "ngram", "num_speculative_tokens": 2, "disable_by_batch_size": 8})")
                .disable_by_batch_size(),
            8u);
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 2, "disable_by_batch_size": 1})"),
              HasSubstr("disable_by_batch_size must be an integer > 1, got 1"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 2, "disable_by_batch_size": "8"})"),
              HasSubstr("disable_by_batch_size must be an integer > 1"));
}

}  // namespace speculative_config_test
}  // namespace llmserve::deploy
