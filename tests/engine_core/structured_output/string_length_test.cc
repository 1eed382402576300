// JSON strings with minLength / maxLength: counted rules (characters counted
// at match time, one per code point or escape), their masks against the
// brute-force oracle, rollback, shared masks, and ajv on the outputs.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

#include "engine_core/structured_output/json_schema.h"
#include "tests/engine_core/structured_output/schema_validator.h"
#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output::strlen_test {

using testing::BruteForceAllowed;
using testing::MaskIds;
using testing::Matches;
using testing::ojson;

StatusOr<std::shared_ptr<const Grammar>> Compact(const std::string& schema) {
  JsonSchemaOptions o;
  o.any_whitespace = false;
  return CompileJsonSchema(schema, o);
}

std::string Bounds(int min, int max) {
  std::string s = R"({"type": "string")";
  if (min >= 0) s += ", \"minLength\": " + std::to_string(min);
  if (max >= 0) s += ", \"maxLength\": " + std::to_string(max);
  return s + "}";
}

// Tokens that start several characters, escapes, pieces of escapes and of
// UTF-8 characters, and tokens that close a string and go on.
std::shared_ptr<const Vocabulary> StringVocab() {
  static std::shared_ptr<const Vocabulary> v = [] {
    std::vector<std::string> toks;
    for (int b = 0; b < 256; ++b) toks.push_back(std::string(1, static_cast<char>(b)));
    for (const char* t : {"ab", "abc", "abcd", "abcdefgh", "a\"", "ab\"", "abc\"", "\"", "\",", "\"}", "x\"}",
                          "\"]", "\\n", "\\nab", "a\\n", "\\u00e9", "\\u00", "e9", "e9\"", "\\\"", "\\\\\"",
                          "\xC3\xA9", "\xC3\xA9\xC3\xA9", "\xE4\xB8\xAD", "\xE4\xB8", "\xAD", "\xAD\"",
                          "\xF0\x9F\x98\x80", "\xF0\x9F", "\x98\x80x", "{\"s\":\"", "{\"s\":\"ab", "\"}\n"})
      toks.push_back(t);
    toks.push_back("");
    const auto eos = static_cast<int32_t>(toks.size() - 1);  // before toks is moved from
    return Vocabulary::Create(std::move(toks), {eos}).value();
  }();
  return v;
}

TEST(StringLengthTest, EscapesAndUtf8CountAsOneCharacter) {
  auto g = Compact(Bounds(2, 3));
  for (const char* ok : {R"("ab")", R"("a\nc")", R"("\u00e9\n")", "\"\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\"",
                         R"("\\\"")", "\"\\u00e9\xC3\xA9x\""})
    EXPECT_TRUE(Matches(g, ok)) << ok;
  for (const char* bad : {R"("a")", R"("abcd")", R"("\u00e9")", "\"\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80x\"",
                          R"("\n\n\n\n")", "\"\xF0\x9F\x98\x80\""})
    EXPECT_FALSE(Matches(g, bad)) << bad;
  auto exact = Compact(Bounds(0, 0));
  EXPECT_TRUE(Matches(exact, R"("")"));
  EXPECT_FALSE(Matches(exact, R"("a")"));
  auto at_least = Compact(Bounds(3, -1));
  EXPECT_TRUE(Matches(at_least, "\"" + std::string(500, 'z') + "\""));
  EXPECT_FALSE(Matches(at_least, R"("\t\t")"));
}

// The counted rule does not grow with maxLength: 100,000 characters fit in
// a small automaton (an unrolled chain was rejected past 100,000 nodes).
TEST(StringLengthTest, LargeBoundsCompileToASmallAutomaton) {
  auto g = Compact(Bounds(99990, 100000));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_LT((*g)->nodes().size(), 100u);
  GrammarMatcher m(CompiledGrammar::Compile(*g, testing::ByteVocab()));
  ASSERT_TRUE(m.AcceptBytes("\"" + std::string(99989, 'q')));
  EXPECT_FALSE(m.Clone()->AcceptBytes("\""));
  ASSERT_TRUE(m.AcceptBytes("\xC3\xA9"));
  EXPECT_TRUE(m.Clone()->AcceptBytes("\""));
  ASSERT_TRUE(m.AcceptBytes(std::string(10, 'q')));
  EXPECT_FALSE(m.Clone()->AcceptBytes("q"));
  EXPECT_EQ(MaskIds(m), std::vector<int32_t>{'"'});
}

// Random walks: at every step the mask equals the tokens the matcher
// accepts, it is never empty before the end, and every output is valid.
void WalkAndCompare(const std::string& schema, const std::shared_ptr<const CompiledGrammar>& compiled,
                    uint64_t seed, std::vector<std::string>* outputs) {
  std::mt19937_64 rng(seed);
  const Vocabulary& vocab = compiled->vocab();
  const int32_t eos = vocab.eos_ids()[0];
  for (int walk = 0; walk < 12; ++walk) {
    GrammarMatcher m(compiled);
    std::string out;
    for (int step = 0; step < 60; ++step) {
      std::vector<int32_t> allowed = MaskIds(m);
      ASSERT_FALSE(allowed.empty()) << schema << " after " << out;
      ASSERT_EQ(allowed, BruteForceAllowed(m)) << schema << " after " << out;
      const bool can_end = allowed.back() == eos;
      int32_t pick = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
      if (can_end && std::uniform_real_distribution<double>(0, 1)(rng) < 0.3) pick = eos;
      ASSERT_TRUE(m.AcceptToken(pick));
      if (pick == eos) break;
      out += vocab.bytes(pick);
    }
    if (!m.IsTerminated()) continue;
    ojson value = ojson::parse(out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(value.is_discarded()) << "not JSON: " << out;
    ojson s = ojson::parse(schema);
    EXPECT_TRUE(testing::Validate(value, s, s)) << out << " for " << schema;
    outputs->push_back(out);
  }
}

std::vector<std::string> LengthSchemas() {
  std::vector<std::string> out;
  for (auto [min, max] : std::vector<std::pair<int, int>>{{0, 1}, {1, 1}, {2, 3}, {0, 5}, {4, 4}, {3, -1}, {0, 12}})
    out.push_back(Bounds(min, max));
  out.push_back(R"({"type": "object", "properties": {"s": )" + Bounds(1, 4) + R"(}, "required": ["s"]})");
  out.push_back(R"({"type": "array", "items": )" + Bounds(0, 2) + R"(, "maxItems": 3})");
  return out;
}

TEST(StringLengthTest, MasksMatchBruteForceOnRandomWalks) {
  std::vector<std::string> outputs;
  uint64_t seed = 1;
  for (const std::string& schema : LengthSchemas()) {
    auto g = Compact(schema);
    ASSERT_TRUE(g.ok()) << schema << " " << g.status().ToString();
    WalkAndCompare(schema, CompiledGrammar::Compile(*g, StringVocab()), seed++, &outputs);
  }
  EXPECT_GT(outputs.size(), 40u);
}

// Outputs checked by ajv, which counts code points (skipped without node and
// ajv: run `npm install` in the repository root).
TEST(StringLengthTest, AjvAcceptsEveryOutput) {
  if (std::system("node -e \"require('ajv/dist/2020'); require('ajv-formats')\" >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node with ajv and ajv-formats not found";
  }
  std::string path = ::testing::TempDir() + "string_length_pairs.jsonl";
  {
    std::ofstream dump(path);
    uint64_t seed = 100;
    for (const std::string& schema : LengthSchemas()) {
      std::vector<std::string> outputs;
      WalkAndCompare(schema, CompiledGrammar::Compile(*Compact(schema), StringVocab()), seed++, &outputs);
      for (const std::string& out : outputs) dump << ojson{{"schema", ojson::parse(schema)}, {"output", out}}.dump() << "\n";
    }
  }
  int rc = std::system(("node tests/engine_core/structured_output/validate_with_ajv.cjs " + path).c_str());
  EXPECT_EQ(rc, 0) << "ajv rejected outputs of " << path;
}

// The count is part of the matcher's state: rolling back restores it, and a
// clone carries it.
TEST(StringLengthTest, RollbackAndCloneRestoreTheCount) {
  auto compiled = CompiledGrammar::Compile(*Compact(Bounds(2, 4)), StringVocab());
  auto id = [&](const std::string& t) {
    for (int32_t i = 0; i < compiled->vocab().size(); ++i)
      if (compiled->vocab().bytes(i) == t) return i;
    return -1;
  };
  const std::vector<int32_t> only_quote = {'"', 256 + 7};  // the byte and the token "\""
  ASSERT_EQ(compiled->vocab().bytes(only_quote[1]), "\"");
  GrammarMatcher m(compiled);
  ASSERT_TRUE(m.AcceptToken(id("\"")));
  ASSERT_TRUE(m.AcceptToken(id("a")));
  const std::vector<int32_t> after_one = MaskIds(m);
  ASSERT_TRUE(m.AcceptToken(id("abc")));  // 4 characters: only the quote is left
  EXPECT_EQ(MaskIds(m), only_quote);
  auto clone = m.Clone();
  m.Rollback(1);
  EXPECT_EQ(MaskIds(m), after_one);
  EXPECT_FALSE(m.AcceptToken(id("abcd")));
  EXPECT_TRUE(m.AcceptToken(id("ab\"")));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_EQ(MaskIds(*clone), only_quote);
}

// Every (minLength, maxLength) uses the same position masks: the first
// grammar's walks serve all the others (through the vocabulary's cache).
TEST(StringLengthTest, LengthRangesShareOnePositionMask) {
  auto vocab = StringVocab();
  auto a = CompiledGrammar::Compile(*Compact(Bounds(1, 80)), vocab);
  auto b = CompiledGrammar::Compile(*Compact(Bounds(0, 20)), vocab);
  auto first_char = [](const CompiledGrammar& c) {
    const Grammar& g = c.grammar();
    for (size_t i = 0; i < g.nodes().size(); ++i)
      if (g.rules()[g.nodes()[i].rule].counted() && c.mask(static_cast<int32_t>(i))) return c.mask(static_cast<int32_t>(i));
    return static_cast<const PositionMask*>(nullptr);
  };
  ASSERT_NE(first_char(*a), nullptr);
  EXPECT_EQ(first_char(*a), first_char(*b));
}

// The per-token counts are exact only when a counted rule's walk takes one
// edge per byte: the JSON string character is deterministic.
TEST(StringLengthTest, CountedStringWalksTakeOneEdgePerByte) {
  auto g = Compact(R"({"type": "object", "properties": {"s": )" + Bounds(1, 5) + R"(}, "required": ["s"]})");
  ASSERT_TRUE(g.ok());
  LocalDfa dfa(**g);
  int counted = 0;
  for (size_t i = 0; i < (*g)->nodes().size(); ++i) {
    const Node& n = (*g)->nodes()[i];
    if (n.bytes.empty()) continue;
    auto mask = ComputePositionMask(dfa, static_cast<int32_t>(i), *StringVocab());
    counted += mask->counted != nullptr;
  }
  EXPECT_GT(counted, 5);
  EXPECT_FALSE(dfa.ambiguous());
}

// Identical inputs give identical masks, whichever matcher filled the
// shared caches first.
TEST(StringLengthTest, IdenticalInputsGiveIdenticalMasks) {
  auto compiled = CompiledGrammar::Compile(
      *Compact(R"({"type": "object", "properties": {"s": )" + Bounds(1, 6) + R"(}, "required": ["s"]})"), StringVocab());
  GrammarMatcher a(compiled), b(compiled);
  for (const char* bytes : {"{\"s\":\"", "ab", "\xC3\xA9", "\\n", "c"}) {
    ASSERT_TRUE(a.AcceptBytes(bytes));
    ASSERT_TRUE(b.AcceptBytes(bytes));
    EXPECT_EQ(MaskIds(a), MaskIds(b)) << bytes;
  }
}

}  // namespace llmserve::engine_core::structured_output::strlen_test
