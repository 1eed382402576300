#include "engine_core/structured_output/ebnf.h"

#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output {
namespace {

using testing::Matches;

TEST(EbnfTest, StringsClassesAndRepetition) {
  auto g = CompileEbnf(R"(
    root ::= "ab" digit+ tail?   # a comment
    digit ::= [0-9]
    tail ::= "x"{2,3} | [^a-z\n]
  )");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(Matches(g, "ab1"));
  EXPECT_TRUE(Matches(g, "ab12xx"));
  EXPECT_TRUE(Matches(g, "ab12xxx"));
  EXPECT_TRUE(Matches(g, "ab9Q"));
  EXPECT_TRUE(Matches(g, "ab9\xC3\xA9"));  // é is outside [a-z\n]
  EXPECT_FALSE(Matches(g, "ab"));
  EXPECT_FALSE(Matches(g, "ab1x"));
  EXPECT_FALSE(Matches(g, "ab1xxxx"));
  EXPECT_FALSE(Matches(g, "ab1q"));
}

TEST(EbnfTest, RecursionGroupsAndContinuationLines) {
  auto g = CompileEbnf(
      "root ::= list\n"
      "list ::= \"[\" ( item ( \",\" item )* )? \"]\"\n"
      "item ::= list\n"
      "       | [0-9]\n");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(Matches(g, "[]"));
  EXPECT_TRUE(Matches(g, "[1,[2,[]],3]"));
  EXPECT_FALSE(Matches(g, "[1,]"));
  EXPECT_FALSE(Matches(g, "[[1]"));
}

TEST(EbnfTest, EscapesAndBounds) {
  auto g = CompileEbnf(R"(root ::= "\x41\u00e9\"" [\t-\r]{1} "."{0,} .)");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(Matches(g, "A\xC3\xA9\"\n..z"));
  EXPECT_TRUE(Matches(g, "A\xC3\xA9\"\t\xE2\x82\xAC"));
  EXPECT_FALSE(Matches(g, "A\xC3\xA9\" z"));
}

TEST(EbnfTest, ErrorsCarryLineAndColumn) {
  auto e1 = CompileEbnf("root ::= \"a\"\nfoo ::= \"b\" (\"c\"\n");
  ASSERT_FALSE(e1.ok());
  EXPECT_NE(e1.status().message().find("2:"), std::string::npos) << e1.status().message();
  auto e2 = CompileEbnf("root ::= undefined-rule");
  ASSERT_FALSE(e2.ok());
  EXPECT_NE(e2.status().message().find("1:10"), std::string::npos) << e2.status().message();
  EXPECT_NE(e2.status().message().find("undefined-rule"), std::string::npos);
  auto e3 = CompileEbnf("start ::= \"a\"");
  ASSERT_FALSE(e3.ok());
  EXPECT_NE(e3.status().message().find("root"), std::string::npos);
  auto e4 = CompileEbnf("root ::= [b-a]");
  EXPECT_FALSE(e4.ok());
  auto e5 = CompileEbnf("root ::= root \"a\" | \"b\"");
  ASSERT_FALSE(e5.ok());
  EXPECT_NE(e5.status().message().find("left recursion"), std::string::npos);
  auto e6 = CompileEbnf("root ::= \"a\" x\nx ::= x \"b\"");
  ASSERT_FALSE(e6.ok());  // x derives nothing, so root derives nothing
}

TEST(EbnfTest, NullableRulesAndEmptyAlternatives) {
  auto g = CompileEbnf("root ::= a* \"!\"\na ::= \"x\" | \"\"\n");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(Matches(g, "!"));
  EXPECT_TRUE(Matches(g, "xxx!"));
  EXPECT_FALSE(Matches(g, "x"));
}

TEST(EbnfTest, AJsonGrammarInLlamaCppStyle) {
  auto g = CompileEbnf(R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(Matches(g, R"({"a": [1, 2.5e3, "x\u00e9"], "b": {"c": null}} )"));
  EXPECT_TRUE(Matches(g, "{}"));
  EXPECT_FALSE(Matches(g, R"({"a" 1})"));
  EXPECT_FALSE(Matches(g, "[]"));
}

TEST(EbnfTest, HugeRepetitionIsAnErrorNotAHang) {
  auto g = CompileEbnf("root ::= (\"ab\"{1000}){1000}");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("too large"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace llmserve::engine_core::structured_output
