// Token masks against expectations and against a brute-force oracle.

#include "engine_core/structured_output/ebnf.h"
#include "engine_core/structured_output/json_schema.h"
#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output {
namespace {

using testing::BruteForceAllowed;
using testing::MaskIds;

std::vector<int32_t> Ids(std::initializer_list<int32_t> ids) { return ids; }

TEST(MaskTest, ChoiceOverMultiByteTokens) {
  auto v = Vocabulary::Create({"ye", "s", "yes", "no", "n", "o", "x", "</s>", "yess"}, {7}).value();
  GrammarMatcher m(CompiledGrammar::Compile(*CompileChoice({"yes", "no"}), v));
  EXPECT_EQ(MaskIds(m), Ids({0, 2, 3, 4}));
  ASSERT_TRUE(m.AcceptToken(0));
  EXPECT_EQ(MaskIds(m), Ids({1}));
  ASSERT_TRUE(m.AcceptToken(1));
  EXPECT_EQ(MaskIds(m), Ids({7}));  // only EOS once the grammar is complete
  ASSERT_TRUE(m.AcceptToken(7));
  EXPECT_EQ(MaskIds(m), Ids({}));
}

TEST(MaskTest, TokensCrossingTheEndOfAStringDependOnContext) {
  // `"}` closes a string and the object; `",` would need another property.
  auto v = Vocabulary::Create({"{\"a\":\"", "x", "\"}", "\",", "x\"}", "\"", "}", "<eos>"}, {7}).value();
  JsonSchemaOptions o;
  o.any_whitespace = false;
  auto g = CompileJsonSchema(R"({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})", o);
  GrammarMatcher m(CompiledGrammar::Compile(*g, v));
  ASSERT_TRUE(m.AcceptToken(0));
  EXPECT_EQ(MaskIds(m), Ids({1, 2, 4, 5, 6}));  // "}" is a string character
  EXPECT_EQ(MaskIds(m), BruteForceAllowed(m));
  auto g2 = CompileJsonSchema(R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "null"}},
                                  "required": ["a", "b"]})", o);
  GrammarMatcher m2(CompiledGrammar::Compile(*g2, v));
  ASSERT_TRUE(m2.AcceptToken(0));
  EXPECT_EQ(MaskIds(m2), Ids({1, 3, 5, 6}));
}

TEST(MaskTest, EosOnlyWhenTheGrammarCanEnd) {
  auto v = Vocabulary::Create({"a", "aa", "b", "<eos>", "<eot>"}, {3, 4}).value();
  GrammarMatcher m(CompiledGrammar::Compile(*CompileEbnf("root ::= \"a\"+ \"b\"?"), v));
  EXPECT_EQ(MaskIds(m), Ids({0, 1}));
  ASSERT_TRUE(m.AcceptToken(1));
  EXPECT_EQ(MaskIds(m), Ids({0, 1, 2, 3, 4}));
  ASSERT_TRUE(m.AcceptToken(2));
  EXPECT_EQ(MaskIds(m), Ids({3, 4}));
}

TEST(MaskTest, RecursiveGrammarMatchesBruteForce) {
  std::vector<std::string> toks = {"[", "]", "[[", "]]", "],", ",[", ",", "1", "[1", "1]", "1,", "]]]", "[]", "x"};
  toks.push_back("");
  auto v = Vocabulary::Create(toks, {static_cast<int32_t>(toks.size() - 1)}).value();
  auto g = CompileEbnf("root ::= list\nlist ::= \"[\" (item (\",\" item)*)? \"]\"\nitem ::= list | \"1\"");
  GrammarMatcher m(CompiledGrammar::Compile(*g, v));
  for (const char* step : {"[[", "1", ",[", "]", "],", "[1", "]]"}) {
    EXPECT_EQ(MaskIds(m), BruteForceAllowed(m)) << "before " << step;
    int32_t id = static_cast<int32_t>(std::find(toks.begin(), toks.end(), step) - toks.begin());
    ASSERT_TRUE(m.AcceptToken(id)) << step;
  }
  EXPECT_EQ(MaskIds(m), Ids({static_cast<int32_t>(toks.size() - 1)}));
}

TEST(MaskTest, MaskLayoutIsXgrammars) {
  std::vector<std::string> toks;
  for (int i = 0; i < 70; ++i) toks.emplace_back(i == 33 ? "a" : i == 69 ? "" : "z");
  auto v = Vocabulary::Create(toks, {69}).value();
  EXPECT_EQ(v->mask_words(), 3);
  GrammarMatcher m(CompiledGrammar::Compile(*CompileEbnf("root ::= \"a\""), v));
  std::vector<int32_t> mask(3, -1);
  m.FillNextTokenBitmask(mask.data());
  EXPECT_EQ(mask, (std::vector<int32_t>{0, 2, 0}));
  ASSERT_TRUE(m.AcceptToken(33));
  m.FillNextTokenBitmask(mask.data());
  EXPECT_EQ(mask, (std::vector<int32_t>{0, 0, 1 << 5}));
}

// Stacks that differ only below the position (nesting depth) get their own
// UncertainCache entries, and a second matcher reading the entries the first
// one stored sees the same masks as the brute-force oracle.
TEST(MaskTest, MatchersSharingAGrammarAgreeWithBruteForce) {
  std::vector<std::string> toks = {"{\"a\":", "\"", "x", "\"}", "\"},", "\"}}", "}", "{", "\"}]", "\"}}}", ""};
  auto v = Vocabulary::Create(toks, {static_cast<int32_t>(toks.size() - 1)}).value();
  auto g = CompileEbnf("root ::= obj\nobj ::= \"{\\\"a\\\":\" (str | obj) \"}\"\nstr ::= \"\\\"\" [x]* \"\\\"\"");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto compiled = CompiledGrammar::Compile(*g, v);
  for (int depth : {2, 3, 2, 3}) {  // "}}} ends the grammar only at depth 3
    GrammarMatcher m(compiled);
    for (int d = 0; d < depth; ++d) ASSERT_TRUE(m.AcceptToken(0));
    ASSERT_TRUE(m.AcceptToken(1));
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(MaskIds(m), BruteForceAllowed(m)) << "depth " << depth << " step " << k;
      ASSERT_TRUE(m.AcceptToken(2));
    }
  }
  EXPECT_GE(compiled->uncertain_cache().size(), 2u);
}

TEST(MaskTest, UncertainCacheStartsOverPastItsBudget) {
  UncertainCache cache(4);
  auto three = std::make_shared<const std::vector<int32_t>>(std::vector<int32_t>{1, 2, 3});
  cache.Insert({7, 1}, three);
  ASSERT_NE(cache.Find({7, 1}), nullptr);
  EXPECT_EQ(cache.Find({7, 2}), nullptr);
  cache.Insert({7, 2}, three);  // 6 ids > 4: the first entry goes
  EXPECT_EQ(cache.Find({7, 1}), nullptr);
  EXPECT_EQ(*cache.Find({7, 2}), *three);
  EXPECT_EQ(cache.size(), 1u);
}

// Leaf-rule masks are cached per vocabulary. Past its byte budget the cache
// starts over; the masks of every grammar compiled before and after stay
// right (shape ids are never reissued for another shape).
TEST(MaskTest, VocabularyMaskCacheStartsOverPastItsBudget) {
  std::vector<std::string> toks;
  for (int b = 0; b < 256; ++b) toks.push_back(std::string(1, static_cast<char>(b)));
  // Tokens of several letters: a position's mask depends on how many are left.
  for (int n = 2; n <= 6; ++n) toks.push_back(std::string(n, 'q'));
  toks.push_back("");
  const size_t budget = 2 << 10;
  const int32_t eos = static_cast<int32_t>(toks.size()) - 1;
  auto vocab = Vocabulary::Create(std::move(toks), {eos}, {}, budget).value();
  std::vector<std::shared_ptr<const CompiledGrammar>> grammars;
  for (int k = 1; k <= 12; ++k) {
    const std::string schema = R"({"type":"string","pattern":"^[a-z]{)" + std::to_string(k) + R"(}$"})";
    auto g = CompileJsonSchema(schema);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    grammars.push_back(CompiledGrammar::Compile(*g, vocab));
    EXPECT_LE(vocab->cache_bytes(), budget);
  }
  EXPECT_GT(vocab->cache_restarts(), 0);
  for (int k = 1; k <= 12; ++k) {
    for (int len : {k - 1, k, k + 1}) {
      GrammarMatcher m(grammars[k - 1]);
      const bool whole = m.AcceptBytes("\"" + std::string(len, 'q') + "\"") && m.CanEnd();
      EXPECT_EQ(whole, len == k) << "pattern of " << k << " letters, " << len << " given";
    }
    // After the opening quote the mask allows "qqq" exactly when 3 letters fit.
    GrammarMatcher m(grammars[k - 1]);
    ASSERT_TRUE(m.AcceptBytes("\""));
    std::vector<int32_t> mask(static_cast<size_t>(vocab->mask_words()));
    m.FillNextTokenBitmask(mask.data());
    for (int n = 2; n <= 6; ++n) {
      const int32_t id = 256 + n - 2;
      EXPECT_EQ((static_cast<uint32_t>(mask[id >> 5]) >> (id & 31)) & 1u, n <= k ? 1u : 0u)
          << "pattern of " << k << " letters, token of " << n;
    }
  }
}

}  // namespace
}  // namespace llmserve::engine_core::structured_output
