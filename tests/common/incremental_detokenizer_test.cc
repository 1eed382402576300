// Streaming detokenization: property tests on random token sequences of the
// real tokenizers (concatenated deltas == full decode, every delta valid
// UTF-8), and vLLM's stop-string semantics.
#include <gtest/gtest.h>

#include <random>

#include "common/tokenizer/byte_level.h"
#include "common/tokenizer/incremental_detokenizer.h"
#include "base/utf8.h"
#include "tests/common/tokenizer_test_util.h"

namespace llmserve::common::tokenizer {
namespace {

// Ids that stress streaming: byte-level tokens that are lone UTF-8 lead or
// continuation bytes, "<0xXX>" byte-fallback tokens, special tokens, and
// tokens of real multi-byte text.
std::vector<int32_t> InterestingIds(const Tokenizer& t) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < t.vocab_size(); ++id) {
    auto tok = t.IdToToken(id);
    if (!tok) continue;
    const bool byte_token = tok->size() == 6 && tok->compare(0, 3, "<0x") == 0;
    size_t pos = 0;
    char32_t cp = 0;
    const bool single_char = base::DecodeUtf8(*tok, &pos, &cp) && pos == tok->size();
    if (byte_token || (single_char && cp >= 0x80 && cp < 0x180) || t.IsSpecial(id)) ids.push_back(id);
  }
  for (int32_t id : t.Encode("naïve 你好世界 🦀🚀 👨‍👩‍👧 e\xCC\x81 Ωμέγα ", false)) ids.push_back(id);
  return ids;
}

DetokenizerOptions Opts(std::vector<std::string> stop, bool include_stop = false, bool skip = true) {
  DetokenizerOptions o;
  o.stop = std::move(stop);
  o.include_stop_str_in_output = include_stop;
  o.skip_special_tokens = skip;
  return o;
}

void CheckStreamingProperty(const Tokenizer& t, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<int32_t> interesting = InterestingIds(t);
  ASSERT_FALSE(interesting.empty());
  std::uniform_int_distribution<int32_t> any(0, t.vocab_size() - 1);
  std::uniform_int_distribution<size_t> pick(0, interesting.size() - 1);
  std::uniform_int_distribution<int> len(1, 40);
  for (int seq = 0; seq < 150; ++seq) {
    std::vector<int32_t> ids;
    const int n = len(rng);
    for (int i = 0; i < n; ++i) ids.push_back(rng() % 3 == 0 ? any(rng) : interesting[pick(rng)]);
    for (bool skip : {false, true}) {
      IncrementalDetokenizer d(t, Opts({}, false, skip));
      std::string streamed;
      for (int32_t id : ids) {
        const auto u = d.Push(id);
        EXPECT_TRUE(base::IsValidUtf8(u.delta));
        streamed += u.delta;
      }
      const auto last = d.Finish();
      EXPECT_TRUE(base::IsValidUtf8(last.delta));
      streamed += last.delta;
      ASSERT_EQ(streamed, t.Decode(ids, skip)) << "seed " << seed << " sequence " << seq;
    }
  }
}

TEST(IncrementalDetokenizer, RandomSequencesQwen3) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "qwen3");
  CheckStreamingProperty(*t, 1);
}

TEST(IncrementalDetokenizer, RandomSequencesLlama2ByteFallback) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "llama2");
  CheckStreamingProperty(*t, 2);
}

TEST(IncrementalDetokenizer, RandomSequencesGemma3) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "gemma3");
  CheckStreamingProperty(*t, 3);
}

TEST(IncrementalDetokenizer, RandomSequencesDeepSeekV3) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "deepseek_v3");
  CheckStreamingProperty(*t, 4);
}

// Streams `text` token by token; returns the deltas.
std::vector<DetokenizerUpdate> Stream(const Tokenizer& t, const std::string& text, DetokenizerOptions o,
                                      const std::string& prompt = "") {
  const auto prompt_ids = t.Encode(prompt, false);
  IncrementalDetokenizer d(t, std::move(o), prompt_ids);
  std::vector<DetokenizerUpdate> out;
  for (int32_t id : t.Encode(text, false)) {
    out.push_back(d.Push(id));
    if (out.back().stopped) return out;
  }
  out.push_back(d.Finish());
  return out;
}

std::string Joined(const std::vector<DetokenizerUpdate>& us) {
  std::string s;
  for (const auto& u : us) s += u.delta;
  return s;
}

TEST(IncrementalDetokenizer, StopStringAcrossTokensIsCutAndNeverStreamed) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "qwen3");
  const std::string text = "The answer is 42.\nObservation: done and more text";
  auto us = Stream(*t, text, Opts({"Observation:"}));
  ASSERT_TRUE(us.back().stopped);
  EXPECT_EQ(us.back().stop_index, 0);
  EXPECT_EQ(Joined(us), "The answer is 42.\n");
  for (const auto& u : us) EXPECT_EQ(u.delta.find("Obs"), std::string::npos);
  // include_stop_str_in_output keeps the stop string.
  us = Stream(*t, text, Opts({"Observation:"}, true));
  EXPECT_EQ(Joined(us), "The answer is 42.\nObservation:");
}

TEST(IncrementalDetokenizer, StopStringsCheckedInListOrder) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "llama3");
  // Both appear in the same token's text; vLLM returns the first in list order.
  auto us = Stream(*t, "alpha beta gamma", Opts({"gamma", "beta", "zzz"}));
  ASSERT_TRUE(us.back().stopped);
  EXPECT_EQ(us.back().stop_index, 1);
  EXPECT_EQ(Joined(us), "alpha ");
  // No match: everything comes out, the held-back tail at Finish.
  us = Stream(*t, "alpha beta", Opts({"zzz"}));
  EXPECT_FALSE(us.back().stopped);
  EXPECT_EQ(Joined(us), "alpha beta");
  // A stop string inside a multi-byte text is matched on bytes.
  us = Stream(*t, "你好世界和平", Opts({"世界"}));
  EXPECT_EQ(Joined(us), "你好");
}

TEST(IncrementalDetokenizer, StopStringsIgnoredBeforeMinTokens) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "qwen3");
  const auto ids = t->Encode("stop here, stop there", false);  // "stop" is one token
  DetokenizerOptions o = Opts({"stop"});
  o.min_tokens = 1;  // the first token's text cannot stop the request
  IncrementalDetokenizer d(*t, o);
  std::string s;
  DetokenizerUpdate u;
  for (int32_t id : ids) {
    u = d.Push(id);
    s += u.delta;
    if (u.stopped) break;
  }
  ASSERT_TRUE(u.stopped);
  EXPECT_EQ(s, "stop here, ");
}

TEST(IncrementalDetokenizer, PromptContextKeepsLeadingSpace) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "llama2");
  // Without context the SentencePiece decoder strips the first space; with
  // the prompt as context the output's first word keeps it, as in vLLM.
  const auto prompt = t->Encode("[INST] Say hi [/INST]", false);
  auto gen = t->Encode("[INST] Say hi [/INST] Hello there", false);
  gen.erase(gen.begin(), gen.begin() + static_cast<std::ptrdiff_t>(prompt.size()));
  IncrementalDetokenizer d(*t, {}, prompt);
  std::string s;
  for (int32_t id : gen) s += d.Push(id).delta;
  s += d.Finish().delta;
  EXPECT_EQ(s, " Hello there");
  EXPECT_EQ(d.num_output_tokens(), gen.size());
}

}  // namespace
}  // namespace llmserve::common::tokenizer

namespace llmserve::common::tokenizer {
namespace {

// A character split between the prompt and the output is not lost: Finish
// falls back to decoding the output tokens alone.
TEST(IncrementalDetokenizer, CharacterSplitAcrossPromptAndOutput) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(t, "qwen3");
  auto byte_id = [&](unsigned char b) { return *t->TokenToId(ByteToUnicode(b)); };
  std::vector<int32_t> prompt = t->Encode("Hi ", false);
  prompt.push_back(byte_id(0xE4));
  std::vector<int32_t> gen = {byte_id(0xBD), byte_id(0xA0)};
  for (int32_t id : t->Encode("ok", false)) gen.push_back(id);
  IncrementalDetokenizer d(*t, {}, prompt);
  std::string s;
  for (int32_t id : gen) s += d.Push(id).delta;
  s += d.Finish().delta;
  EXPECT_EQ(s, t->Decode(gen, true));
  EXPECT_EQ(s, "\xEF\xBF\xBD\xEF\xBF\xBDok");
}

}  // namespace
}  // namespace llmserve::common::tokenizer
