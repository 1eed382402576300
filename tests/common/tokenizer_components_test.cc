// Unit tests of the tokenizer components on small hand-written tokenizer.json
// files: BPE merging, byte fallback, normalizers, pre-tokenizers, added-token
// flags, post-processors and decoders.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "common/tokenizer/byte_level.h"
#include "common/tokenizer/normalizers.h"
#include "common/tokenizer/pre_tokenizers.h"
#include "common/tokenizer/tokenizer.h"
#include "base/utf8.h"

namespace llmserve::common::tokenizer {
namespace {

using nlohmann::json;

std::unique_ptr<Tokenizer> Build(const json& tok, const json& config = json()) {
  auto t = Tokenizer::FromJson(tok.dump(), config.is_null() ? "" : config.dump(), "test");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

// A byte-level BPE over all 256 byte symbols plus a few merges.
json ByteLevelTokenizer() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[ByteToUnicode(static_cast<unsigned char>(b))] = b;
  const char* merged[] = {"he", "ll", "llo", "hello", "Ġw", "or", "Ġwor", "ld", "Ġworld"};
  for (int i = 0; i < 9; ++i) vocab[merged[i]] = 256 + i;
  json merges = json::array({"h e", "l l", "ll o", "he llo", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld"});
  return {
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"added_tokens", json::array({{{"id", 300}, {"content", "<|end|>"}, {"special", true}},
                                    {{"id", 301}, {"content", "<tool>"}, {"special", false},
                                     {"normalized", false}}})},
  };
}

TEST(TokenizerBpe, ByteLevelMergesAndRoundTrip) {
  auto t = Build(ByteLevelTokenizer());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("hello world", false), (std::vector<int32_t>{259, 264}));
  // 'é' is two bytes with no merge: two byte symbols.
  EXPECT_EQ(t->Encode("é", false), (std::vector<int32_t>{0xC3, 0xA9}));
  EXPECT_EQ(t->Decode(std::vector<int32_t>{259, 264, 0xC3, 0xA9}, false), "hello worldé");
  // A lone continuation byte decodes to U+FFFD, never to invalid UTF-8.
  EXPECT_EQ(t->Decode(std::vector<int32_t>{'a', 0xA9}, false), "a\xEF\xBF\xBD");
  EXPECT_EQ(t->vocab_size(), 302);
  EXPECT_EQ(t->TokenToId("Ġworld"), 264);
  EXPECT_EQ(t->IdToToken(264), "Ġworld");
  EXPECT_FALSE(t->IdToToken(299).has_value());
}

TEST(TokenizerBpe, AddedAndSpecialTokens) {
  auto t = Build(ByteLevelTokenizer());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("hello<|end|><tool>", false), (std::vector<int32_t>{259, 300, 301}));
  EXPECT_EQ(t->Decode(std::vector<int32_t>{259, 300, 301}, false), "hello<|end|><tool>");
  EXPECT_EQ(t->Decode(std::vector<int32_t>{259, 300, 301}, true), "hello<tool>");
  EXPECT_TRUE(t->IsSpecial(300));
  EXPECT_FALSE(t->IsSpecial(301));
  // split_special_tokens: special tokens are encoded as text, others still match.
  auto s = Build(ByteLevelTokenizer(), {{"split_special_tokens", true}});
  ASSERT_TRUE(s);
  const auto ids = s->Encode("<|end|><tool>", false);
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_EQ(ids.back(), 301);
  EXPECT_EQ(s->Decode(ids, false), "<|end|><tool>");
}

TEST(TokenizerBpe, AddedTokenStripAndSingleWordFlags) {
  json j = ByteLevelTokenizer();
  j["added_tokens"] = json::array({{{"id", 300}, {"content", "<m>"}, {"lstrip", true}, {"rstrip", true},
                                    {"special", true}},
                                   {{"id", 301}, {"content", "he"}, {"single_word", true},
                                    {"special", false}, {"normalized", false}}});
  auto t = Build(j);
  ASSERT_TRUE(t);
  // lstrip/rstrip swallow the spaces around <m>.
  EXPECT_EQ(t->Encode("hello  <m>  hello", false), (std::vector<int32_t>{259, 300, 259}));
  // single_word: "he" matches alone, not inside "hello".
  EXPECT_EQ(t->Encode("he", false), (std::vector<int32_t>{301}));
  EXPECT_EQ(t->Encode("hello", false), (std::vector<int32_t>{259}));
}

TEST(TokenizerBpe, TemplatePostProcessorAndConfigBos) {
  json j = ByteLevelTokenizer();
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", json::array({{{"SpecialToken", {{"id", "<|end|>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
      {"special_tokens", {{"<|end|>", {{"id", "<|end|>"}, {"ids", {300}}, {"tokens", {"<|end|>"}}}}}}};
  auto t = Build(j, {{"bos_token", "<|end|>"}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("hello", true), (std::vector<int32_t>{300, 259}));
  EXPECT_EQ(t->Encode("hello", false), (std::vector<int32_t>{259}));
  EXPECT_TRUE(t->add_bos());
  // LlamaTokenizerFast rebuilds the template from add_bos_token/add_eos_token.
  auto l = Build(j, {{"bos_token", "<|end|>"}, {"eos_token", "<tool>"}, {"add_bos_token", false},
                     {"add_eos_token", true}, {"tokenizer_class", "LlamaTokenizerFast"}});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->Encode("hello", true), (std::vector<int32_t>{259, 301}));
  EXPECT_FALSE(l->add_bos());
  EXPECT_EQ(l->eos_token_ids(), (std::vector<int32_t>{301}));
}

// A SentencePiece-style vocabulary with byte fallback (Llama 2 / Mistral).
json SentencePieceTokenizer(json pre_tokenizer, json normalizer) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  const char* pieces[] = {"▁", "h", "i", "▁h", "▁hi", "a", "b"};
  for (int i = 0; i < 7; ++i) vocab[pieces[i]] = 259 + i;
  return {
      {"normalizer", normalizer},
      {"pre_tokenizer", pre_tokenizer},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"▁ h", "▁h i"}}, {"unk_token", "<unk>"},
                 {"byte_fallback", true}, {"fuse_unk", true}}},
      {"decoder", {{"type", "Sequence"}, {"decoders", json::array({
          {{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
          {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}}},
      {"added_tokens", json::array({{{"id", 1}, {"content", "<s>"}, {"special", true}}})},
  };
}

TEST(TokenizerBpe, SentencePieceByteFallback) {
  json norm = {{"type", "Sequence"}, {"normalizers", json::array({
      {{"type", "Prepend"}, {"prepend", "▁"}},
      {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}})}};
  auto t = Build(SentencePieceTokenizer(nullptr, norm));
  ASSERT_TRUE(t);
  // "你" is not in the vocabulary: its three UTF-8 bytes become <0xE4><0xBD><0xA0>.
  const auto ids = t->Encode("hi 你", false);
  EXPECT_EQ(ids, (std::vector<int32_t>{263, 259, 3 + 0xE4, 3 + 0xBD, 3 + 0xA0}));
  EXPECT_EQ(t->Decode(ids, false), "hi 你");
  // An unfinished byte run decodes to U+FFFD.
  EXPECT_EQ(t->Decode(std::vector<int32_t>{263, 3 + 0xE4, 3 + 0xBD}, false), "hi\xEF\xBF\xBD");
  // Each section after an added token gets its own "▁" prefix.
  EXPECT_EQ(t->Encode("<s>hi", false), (std::vector<int32_t>{1, 263}));
}

TEST(TokenizerBpe, MetaspacePrependSchemeFirst) {
  json pre = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", false}};
  auto t = Build(SentencePieceTokenizer(pre, nullptr));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Encode("hi", false), (std::vector<int32_t>{263}));
  // Not the first section: no "▁" is prepended after <s>.
  EXPECT_EQ(t->Encode("<s>hi", false), (std::vector<int32_t>{1, 260, 261}));
}

TEST(TokenizerNormalizers, UnicodeFormsCaseAndStrip) {
  auto make = [](json normalizer) {
    json j = ByteLevelTokenizer();
    j["normalizer"] = normalizer;
    j["pre_tokenizer"] = nullptr;
    j["decoder"] = nullptr;
    return Build(j);
  };
  // The decoder is absent, so Decode joins the raw byte-level token strings.
  auto nfkc = make({{"type", "NFKC"}});
  ASSERT_TRUE(nfkc);
  EXPECT_EQ(nfkc->Encode("\xEF\xAC\x81", false), (std::vector<int32_t>{'f', 'i'}));  // "ﬁ" -> "fi"
  auto nfc = make({{"type", "NFC"}});
  // e + ◌́ -> é, which (without a ByteLevel pre-tokenizer) is the vocabulary's "é".
  EXPECT_EQ(nfc->Encode("e\xCC\x81", false), (std::vector<int32_t>{0xE9}));
  auto lower = make({{"type", "Sequence"}, {"normalizers", json::array({
      {{"type", "Lowercase"}}, {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}})}});
  EXPECT_EQ(lower->Encode("  HeLLo \n", false), (std::vector<int32_t>{259}));
  auto replace = make({{"type", "Replace"}, {"pattern", {{"Regex", "\\d+"}}}, {"content", "he"}});
  EXPECT_EQ(replace->Encode("1234llo", false), (std::vector<int32_t>{259}));
}

TEST(TokenizerPreTokenizers, SplitBehaviors) {
  const std::string s = "a,,b";
  const std::vector<std::pair<size_t, size_t>> m = {{1, 2}, {2, 3}};
  auto run = [&](SplitBehavior b, bool invert = false) {
    std::vector<std::string> out;
    SplitAtMatches(s, m, invert, b, &out);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(run(SplitBehavior::kRemoved), (V{"a", "b"}));
  EXPECT_EQ(run(SplitBehavior::kIsolated), (V{"a", ",", ",", "b"}));
  EXPECT_EQ(run(SplitBehavior::kMergedWithPrevious), (V{"a,", ",", "b"}));
  EXPECT_EQ(run(SplitBehavior::kMergedWithNext), (V{"a", ",", ",b"}));
  EXPECT_EQ(run(SplitBehavior::kContiguous), (V{"a", ",,", "b"}));
  EXPECT_EQ(run(SplitBehavior::kRemoved, /*invert=*/true), (V{",", ","}));
}

TEST(TokenizerPreTokenizers, DigitsPunctuationWhitespace) {
  json j = ByteLevelTokenizer();
  j["decoder"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", json::array({
      {{"type", "WhitespaceSplit"}}, {{"type", "Digits"}, {"individual_digits", true}},
      {{"type", "Punctuation"}}})}};
  auto t = Build(j);
  ASSERT_TRUE(t);
  // Decode without a decoder joins token strings with spaces, showing the pieces.
  EXPECT_EQ(t->Decode(t->Encode("he12, or", false), false), "he 1 2 , or");
}

TEST(Tokenizer, CleanUpTokenizationSpaces) {
  EXPECT_EQ(Tokenizer::CleanUpTokenizationSpaces("a , b . c n't"), "a, b. cn't");
}

}  // namespace
}  // namespace llmserve::common::tokenizer

namespace llmserve::common::tokenizer {
namespace {

// The normalizers only hand the unstable parts of the text to utf8proc; the
// result must equal normalizing the whole text at once.
TEST(TokenizerNormalizers, PiecewiseEqualsWholeText) {
  const char32_t pool[] = {'a', 'e', 'O', ' ', 0x00E9, 0x00C5, 0x00A0, 0x00B2, 0x0301, 0x0308, 0x0327,
                           0x0345, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x304B, 0x3099, 0x30AB, 0x4E00,
                           0xFB01, 0x2126, 0x212B, 0x0958, 0x1F71, 0x3300, 0xF900, 0x1E9B, 0x0344,
                           0x1F600, 0x0F73, 0x09BE, 0x09C7};
  std::mt19937 rng(5);
  for (const char* form : {"NFC", "NFD", "NFKC", "NFKD"}) {
    auto n = MakeNormalizer(nlohmann::json{{"type", form}}, {"t", ""});
    ASSERT_TRUE(n.ok());
    const int opts = UTF8PROC_STABLE | (form[2] == 'C' || form[3] == 'C' ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE) |
                     (form[2] == 'K' ? UTF8PROC_COMPAT : 0);
    for (int iter = 0; iter < 2000; ++iter) {
      std::string s;
      const int len = static_cast<int>(rng() % 12);
      for (int k = 0; k < len; ++k) base::AppendUtf8(pool[rng() % std::size(pool)], &s);
      utf8proc_uint8_t* whole = nullptr;
      const auto m = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                  static_cast<utf8proc_ssize_t>(s.size()), &whole,
                                  static_cast<utf8proc_option_t>(opts));
      ASSERT_GE(m, 0);
      const std::string want(reinterpret_cast<const char*>(whole), static_cast<size_t>(m));
      std::free(whole);
      std::string got = s;
      (*n)->Normalize(&got);
      ASSERT_EQ(got, want) << form << " of " << nlohmann::json(s).dump();
    }
  }
}

}  // namespace
}  // namespace llmserve::common::tokenizer
