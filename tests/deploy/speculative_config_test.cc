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
  for (const char* m : {"draft_model", "eagle", "eagle3", "mtp", "deepseek_mtp"}) {
    const std::string e = Error(std::string(R"({"method": ")") + m + R"(", "num_speculative_tokens": 2})");
    EXPECT_THAT(e, HasSubstr(std::string("method \"") + m + "\" is not supported yet"));
    EXPECT_THAT(e, HasSubstr("llmserve implements methods \"ngram\""));
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

TEST(SpeculativeConfig, SuffixWithVllmDefaults) {
  auto c = Parsed(R"({"method": "suffix"})");
  EXPECT_EQ(c.method(), "suffix");
  EXPECT_EQ(c.suffix_decoding_max_tree_depth(), 24u);
  EXPECT_EQ(c.num_speculative_tokens(), 24u);  // vLLM: the tree depth when not given
  EXPECT_EQ(c.suffix_decoding_max_cached_requests(), 10000u);
  EXPECT_DOUBLE_EQ(c.suffix_decoding_max_spec_factor(), 1.0);
  EXPECT_DOUBLE_EQ(c.suffix_decoding_min_token_prob(), 0.1);
  c = Parsed(R"({"method": "suffix", "num_speculative_tokens": 8, "suffix_decoding_max_tree_depth": 32,
                 "suffix_decoding_max_cached_requests": 0, "suffix_decoding_max_spec_factor": 2.5,
                 "suffix_decoding_min_token_prob": 0.25, "disable_by_batch_size": 4})");
  EXPECT_EQ(c.num_speculative_tokens(), 8u);
  EXPECT_EQ(c.suffix_decoding_max_tree_depth(), 32u);
  EXPECT_EQ(c.suffix_decoding_max_cached_requests(), 0u);
  EXPECT_DOUBLE_EQ(c.suffix_decoding_max_spec_factor(), 2.5);
  EXPECT_DOUBLE_EQ(c.suffix_decoding_min_token_prob(), 0.25);
  EXPECT_EQ(c.disable_by_batch_size(), 4u);
}

TEST(SpeculativeConfig, SuffixBadValuesAreErrors) {
  EXPECT_THAT(Error(R"({"method": "suffix", "suffix_decoding_min_token_prob": 1.5})"),
              HasSubstr("suffix_decoding_min_token_prob must be a number from 0 to 1"));
  EXPECT_THAT(Error(R"({"method": "suffix", "suffix_decoding_max_tree_depth": 0})"),
              HasSubstr("suffix_decoding_max_tree_depth must be an integer from 1"));
  EXPECT_THAT(Error(R"({"method": "suffix", "suffix_decoding_max_cached_requests": 1.5})"),
              HasSubstr("suffix_decoding_max_cached_requests must be an integer"));
  EXPECT_THAT(Error(R"({"method": "suffix", "suffix_decoding_max_spec_factor": -1})"),
              HasSubstr("suffix_decoding_max_spec_factor must be a number from 0"));
  EXPECT_THAT(Error(R"({"method": "suffix", "prompt_lookup_min": 2})"),
              HasSubstr("key \"prompt_lookup_min\" is not supported for method suffix"));
  EXPECT_THAT(Error(R"({"method": "ngram", "num_speculative_tokens": 2, "suffix_decoding_max_tree_depth": 8})"),
              HasSubstr("key \"suffix_decoding_max_tree_depth\" is not supported for method ngram"));
  EXPECT_THAT(Error(R"({"method": "suffix", "model": "org/x"})"), HasSubstr("does not go with method suffix"));
}

}  // namespace speculative_config_test
}  // namespace llmserve::deploy
