#include "engine_core/structured_output/regex.h"

#include "engine_core/structured_output/json_schema.h"
#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output {
namespace {

using testing::Matches;

TEST(RegexTest, ClassesEscapesAndQuantifiers) {
  auto g = CompileRegex(R"(^\d{3}-[A-Z][a-z]+\s\w*\.?$)");
  EXPECT_TRUE(Matches(g, "123-Abc x_9."));
  EXPECT_TRUE(Matches(g, "000-Zz\t"));
  EXPECT_FALSE(Matches(g, "12-Abc x"));
  EXPECT_FALSE(Matches(g, "123-abc x"));
  EXPECT_FALSE(Matches(g, "123-Abc x.."));
  auto counts = CompileRegex("a{2,}b{0,2}c{3}");
  EXPECT_TRUE(Matches(counts, "aaccc"));
  EXPECT_TRUE(Matches(counts, "aaaaabbccc"));
  EXPECT_FALSE(Matches(counts, "accc"));
  EXPECT_FALSE(Matches(counts, "aabbbccc"));
}

TEST(RegexTest, GroupsAlternationAndNegation) {
  auto g = CompileRegex(R"((?:cat|dog)s?|(?P<n>[^0-9a-z]+)|(?<x>\x41\u00e9)+?)");
  EXPECT_TRUE(Matches(g, "cat"));
  EXPECT_TRUE(Matches(g, "dogs"));
  EXPECT_TRUE(Matches(g, "QQ\xE2\x82\xAC"));
  EXPECT_TRUE(Matches(g, "A\xC3\xA9" "A\xC3\xA9"));
  EXPECT_FALSE(Matches(g, "cats!"));
  EXPECT_FALSE(Matches(g, "Q1"));
}

TEST(RegexTest, DotExcludesNewlineAndEmitsValidUtf8Only) {
  auto g = CompileRegex("a.c");
  EXPECT_TRUE(Matches(g, "a\xF0\x9F\x98\x80" "c"));
  EXPECT_FALSE(Matches(g, "a\nc"));
  EXPECT_FALSE(Matches(g, "a\xC3" "c"));      // truncated sequence
  EXPECT_FALSE(Matches(g, "a\xED\xA0\x80" "c"));  // a surrogate
}

TEST(RegexTest, UnsupportedConstructsAreErrors) {
  for (const char* p : {"(a)\\1", "a(?=b)", "(?<=a)b", "\\bword", "a++", "(ab", "ab)", "*a", "[b-a]", "a{3,2}"}) {
    auto g = CompileRegex(p);
    EXPECT_FALSE(g.ok()) << p;
    if (!g.ok()) {
      EXPECT_NE(g.status().message().find("offset"), std::string::npos) << g.status().message();
    }
  }
}

TEST(RegexTest, JsonEscapedBodyEscapesQuotesAndControls) {
  auto e = RegexToExpr("[\"\\\\\\n]x", /*json_escaped=*/true);
  ASSERT_TRUE(e.ok());
  GrammarBuilder b;
  int32_t r = b.AddRule("root");
  b.Define(r, *e);
  auto g = b.Build(r);
  EXPECT_TRUE(Matches(g, "\\\"x"));
  EXPECT_TRUE(Matches(g, "\\\\x"));
  EXPECT_TRUE(Matches(g, "\\nx"));
  EXPECT_FALSE(Matches(g, "\"x"));
  EXPECT_FALSE(Matches(g, "\nx"));
}

TEST(ChoiceTest, ExactlyOneOfTheStrings) {
  auto g = CompileChoice({"yes", "no", "maybe so"});
  EXPECT_TRUE(Matches(g, "yes"));
  EXPECT_TRUE(Matches(g, "maybe so"));
  EXPECT_FALSE(Matches(g, "yesno"));
  EXPECT_FALSE(Matches(g, "ye"));
  EXPECT_FALSE(CompileChoice({}).ok());
}

}  // namespace
}  // namespace llmserve::engine_core::structured_output
