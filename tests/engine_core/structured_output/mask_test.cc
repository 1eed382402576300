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

}  // namespace
}  // namespace llmserve::engine_core::structured_output
