// GGUF tokenizers from hand-written tokenizer.ggml.* metadata: the pre
// value picks the split, and metadata that is missing, mistyped or
// unsupported gives an error naming the key and value, never a crash.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "tests/common/gguf_tokenizer_test_util.h"

namespace llmserve::common::tokenizer {
namespace {

using Metadata = std::map<std::string, gguf::GgufValue>;

// A three-token byte-level vocabulary: "a", "b" and their merge "ab", plus a
// control token.
Metadata SmallTokenizer() {
  return {{"tokenizer.ggml.model", std::string("gpt2")},
          {"tokenizer.ggml.pre", std::string("qwen2")},
          {"tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "ab", "<|end|>"}},
          {"tokenizer.ggml.token_type", std::vector<int32_t>{1, 1, 1, 3}},
          {"tokenizer.ggml.merges", std::vector<std::string>{"a b"}},
          {"tokenizer.ggml.eos_token_id", uint32_t{3}}};
}

StatusOr<std::unique_ptr<Tokenizer>> Load(const Metadata& metadata) {
  testing::ScratchDir dir("gguf_tokenizer_errors");
  gguf::GgufWriter writer;
  for (const auto& [key, value] : metadata) writer.Set(key, value);
  testing::WriteGgufOrFail(&writer, dir.File("model.gguf"));
  return Tokenizer::FromDirectory(dir.File("model.gguf"));
}

void ExpectError(const Metadata& metadata, const std::vector<std::string>& parts) {
  auto tok = Load(metadata);
  ASSERT_FALSE(tok.ok());
  for (const std::string& part : parts) {
    EXPECT_NE(tok.status().message().find(part), std::string::npos)
        << "\"" << part << "\" not in: " << tok.status().ToString();
  }
}

TEST(GgufTokenizerErrors, SmallTokenizerLoads) {
  auto tok = Load(SmallTokenizer());
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_EQ((*tok)->Encode("abab<|end|>", false), (std::vector<int32_t>{2, 2, 3}));
  EXPECT_EQ((*tok)->Decode(std::vector<int32_t>{2, 0, 3}, true), "aba");
  EXPECT_EQ((*tok)->eos_token_ids(), std::vector<int32_t>{3});
  EXPECT_TRUE((*tok)->IsSpecial(3));
}

TEST(GgufTokenizerErrors, PreChoosesTheSplit) {
  Metadata m = SmallTokenizer();
  m["tokenizer.ggml.tokens"] = std::vector<std::string>{"1", "2", "12", "<|end|>"};
  m["tokenizer.ggml.merges"] = std::vector<std::string>{"1 2"};
  auto qwen = Load(m);  // "qwen2": one digit per piece
  ASSERT_TRUE(qwen.ok()) << qwen.status().ToString();
  EXPECT_EQ((*qwen)->Encode("12", false), (std::vector<int32_t>{0, 1}));
  m["tokenizer.ggml.pre"] = std::string("llama-bpe");  // up to three digits per piece
  auto llama = Load(m);
  ASSERT_TRUE(llama.ok()) << llama.status().ToString();
  EXPECT_EQ((*llama)->Encode("12", false), std::vector<int32_t>{2});
}

TEST(GgufTokenizerErrors, MissingKeys) {
  for (const char* key : {"tokenizer.ggml.model", "tokenizer.ggml.tokens", "tokenizer.ggml.pre",
                          "tokenizer.ggml.merges"}) {
    SCOPED_TRACE(key);
    Metadata m = SmallTokenizer();
    m.erase(key);
    ExpectError(m, {"model.gguf", key, "missing"});
  }
}

TEST(GgufTokenizerErrors, WrongTypes) {
  Metadata m = SmallTokenizer();
  m["tokenizer.ggml.tokens"] = uint32_t{3};
  ExpectError(m, {"tokenizer.ggml.tokens", "array of string"});
  m = SmallTokenizer();
  m["tokenizer.ggml.token_type"] = std::vector<float>{1, 1, 1, 3};
  ExpectError(m, {"tokenizer.ggml.token_type", "array of int32"});
  m = SmallTokenizer();
  m["tokenizer.ggml.add_bos_token"] = std::string("yes");
  ExpectError(m, {"tokenizer.ggml.add_bos_token", "bool"});
  m = SmallTokenizer();
  m["tokenizer.ggml.eos_token_id"] = std::string("3");
  ExpectError(m, {"tokenizer.ggml.eos_token_id"});
}

TEST(GgufTokenizerErrors, UnsupportedModelAndPre) {
  Metadata m = SmallTokenizer();
  m["tokenizer.ggml.model"] = std::string("bert");
  ExpectError(m, {"tokenizer.ggml.model \"bert\""});
  m = SmallTokenizer();
  m["tokenizer.ggml.pre"] = std::string("deepseek-coder");
  ExpectError(m, {"tokenizer.ggml.pre \"deepseek-coder\""});
}

TEST(GgufTokenizerErrors, BadMergesAndIds) {
  Metadata m = SmallTokenizer();
  m["tokenizer.ggml.merges"] = std::vector<std::string>{"a c"};
  ExpectError(m, {"\"c\"", "not in the vocabulary"});
  m["tokenizer.ggml.merges"] = std::vector<std::string>{"ab"};
  ExpectError(m, {"tokenizer.ggml.merges[0]", "\"ab\""});
  m = SmallTokenizer();
  m["tokenizer.ggml.eos_token_id"] = uint32_t{99};
  ExpectError(m, {"tokenizer.ggml.eos_token_id 99"});
  m = SmallTokenizer();
  m["tokenizer.ggml.token_type"] = std::vector<int32_t>{1, 1};
  ExpectError(m, {"tokenizer.ggml.token_type has 2 entries for 4 tokens"});
  m = SmallTokenizer();
  m["tokenizer.ggml.add_bos_token"] = true;
  ExpectError(m, {"tokenizer.ggml.bos_token_id is missing"});
}

TEST(GgufTokenizerErrors, InvalidUtf8TokensDoNotCrash) {
  Metadata m = SmallTokenizer();
  m["tokenizer.ggml.tokens"] = std::vector<std::string>{"a", "b", "ab", "\xff\xfe"};
  auto tok = Load(m);
  if (tok.ok()) {
    EXPECT_EQ((*tok)->Encode("ab", false), std::vector<int32_t>{2});
  }
}

}  // namespace
}  // namespace llmserve::common::tokenizer
