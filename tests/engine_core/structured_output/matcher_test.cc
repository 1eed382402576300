#include "engine_core/structured_output/matcher.h"

#include "engine_core/structured_output/ebnf.h"
#include "engine_core/structured_output/json_schema.h"
#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output {
namespace {

using testing::ByteVocab;

std::shared_ptr<const Vocabulary> WordVocab() {
  // 0..3 words, 4 = EOS, 5 = a special token with no bytes.
  return Vocabulary::Create({"ab", "a", "b", "c", "", ""}, {4}).value();
}

TEST(MatcherTest, AcceptRejectAndEos) {
  auto g = CompileEbnf("root ::= \"ab\"+ \"c\"");
  GrammarMatcher m(CompiledGrammar::Compile(*g, WordVocab()));
  EXPECT_FALSE(m.AcceptToken(2));  // "b" first: rejected, state unchanged
  EXPECT_FALSE(m.AcceptToken(4));  // EOS before the end
  EXPECT_FALSE(m.AcceptToken(5));  // empty special token
  EXPECT_TRUE(m.AcceptToken(0));
  EXPECT_TRUE(m.AcceptToken(1));
  EXPECT_TRUE(m.AcceptToken(2));
  EXPECT_FALSE(m.CanEnd());
  EXPECT_TRUE(m.AcceptToken(3));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_FALSE(m.IsTerminated());
  EXPECT_TRUE(m.AcceptToken(4));
  EXPECT_TRUE(m.IsTerminated());
  EXPECT_FALSE(m.AcceptToken(0));
  EXPECT_EQ(m.NumSteps(), 5);
}

TEST(MatcherTest, RollbackRestoresEarlierStates) {
  auto g = CompileEbnf("root ::= \"ab\"+ \"c\"");
  GrammarMatcher m(CompiledGrammar::Compile(*g, WordVocab()));
  ASSERT_TRUE(m.AcceptToken(0));
  ASSERT_TRUE(m.AcceptToken(3));
  ASSERT_TRUE(m.AcceptToken(4));
  m.Rollback(2);
  EXPECT_FALSE(m.IsTerminated());
  EXPECT_FALSE(m.CanEnd());
  EXPECT_EQ(m.NumSteps(), 1);
  EXPECT_EQ(testing::MaskIds(m), (std::vector<int32_t>{0, 1, 3}));
  EXPECT_TRUE(m.AcceptToken(0));
  m.Rollback(100);
  EXPECT_EQ(m.NumSteps(), 0);
  EXPECT_EQ(testing::MaskIds(m), (std::vector<int32_t>{0, 1}));
}

TEST(MatcherTest, CloneIsIndependent) {
  auto g = CompileEbnf("root ::= [a-c]{2}");
  GrammarMatcher m(CompiledGrammar::Compile(*g, WordVocab()));
  ASSERT_TRUE(m.AcceptToken(1));
  auto c = m.Clone();
  EXPECT_TRUE(c->AcceptToken(2));
  EXPECT_TRUE(c->CanEnd());
  EXPECT_FALSE(m.CanEnd());
  EXPECT_TRUE(m.AcceptToken(3));
  EXPECT_TRUE(m.CanEnd());
}

TEST(MatcherTest, AmbiguousGrammarsKeepEveryParse) {
  auto g = CompileEbnf("root ::= x \"1\" | x \"2\"\nx ::= \"a\" | \"a\" \"a\" | y\ny ::= \"a\"*");
  GrammarMatcher m(CompiledGrammar::Compile(*g, ByteVocab()));
  EXPECT_TRUE(m.AcceptBytes("aaaa"));
  EXPECT_TRUE(m.AcceptBytes("2"));
  EXPECT_TRUE(m.CanEnd());
}

TEST(MatcherTest, VocabularyRejectsBadIds) {
  EXPECT_FALSE(Vocabulary::Create({"a"}, {3}).ok());
  EXPECT_FALSE(Vocabulary::Create({"a"}, {0}, {-1}).ok());
}

}  // namespace
}  // namespace llmserve::engine_core::structured_output
