// The prompt's logprobs in the answers' shapes (vLLM's): the prompt_logprobs
// list and echo's completion logprob entries.
#include "frontend/serving/prompt_logprobs_output.h"

#include <gtest/gtest.h>

#include <limits>

namespace llmserve::frontend::serving::prompt_logprobs_output_test {

std::string Name(int32_t id) { return "t" + std::to_string(id); }

// Prompt [3, 4, 6]: token 4 is rank 1 (also the top entry), token 6 rank 9
// (not among the top 2), with a -inf alternative.
proto::Logprobs Rows() {
  const float inf = std::numeric_limits<float>::infinity();
  return proto::Logprobs{{{4, 4, 8}, {6, 2, 5}}, {{-0.5f, -0.5f, -2.f}, {-7.f, -0.25f, -inf}}, {1, 9}};
}

TEST(PromptLogprobsOutput, ListHasANullFirstThenThePromptTokenAndTheTopK) {
  const nlohmann::json j = PromptLogprobsJson(Rows(), Name);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_TRUE(j[0].is_null());
  // The prompt token among the top: one entry (vLLM's dict), rank 1.
  EXPECT_EQ(j[1].size(), 2u);
  EXPECT_EQ(j[1]["4"], (nlohmann::json{{"logprob", -0.5}, {"rank", 1}, {"decoded_token", "t4"}}));
  EXPECT_EQ(j[1]["8"]["rank"], 2);
  // Not among them: its own rank, then ranks 1..k; -inf written as -9999.0.
  EXPECT_EQ(j[2].size(), 3u);
  EXPECT_EQ(j[2]["6"]["rank"], 9);
  EXPECT_EQ(j[2]["6"]["logprob"], -7.0);
  EXPECT_EQ(j[2]["2"]["rank"], 1);
  EXPECT_EQ(j[2]["5"]["rank"], 2);
  EXPECT_EQ(j[2]["5"]["logprob"], -9999.0);
}

TEST(PromptLogprobsOutput, EchoEntriesStartNullAndKeepAtMostTopAlternatives) {
  const proto::Logprobs rows = Rows();
  const auto entries = EchoedPromptLogprobs({3, 4, 6}, &rows, 1, Name);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].token, "t3");
  EXPECT_TRUE(entries[0].null_logprob);
  EXPECT_FALSE(entries[1].null_logprob);
  EXPECT_EQ(entries[1].logprob, -0.5);
  EXPECT_EQ(entries[2].token, "t6");
  EXPECT_EQ(entries[2].logprob, -7.0);
  ASSERT_EQ(entries[2].top.size(), 1u);
  EXPECT_EQ(entries[2].top[0].first, "t2");
  // Without rows (the engine sent none) every entry is null.
  for (const auto& e : EchoedPromptLogprobs({3, 4}, nullptr, 2, Name)) EXPECT_TRUE(e.null_logprob);
}

}  // namespace llmserve::frontend::serving::prompt_logprobs_output_test
