// Property test: random schemas (seeded), random vocabularies and random
// walks through the masks. Every mask equals the brute-force set of tokens
// the matcher accepts, is never empty before the end, and every completed
// output parses as JSON and validates against its schema. With
// STRUCTURED_OUTPUT_DUMP=FILE the (schema, output) pairs are appended to FILE
// as JSON lines for validate_with_ajv.cjs.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include "engine_core/structured_output/json_schema.h"
#include "tests/engine_core/structured_output/schema_validator.h"
#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output {
namespace {

using testing::ojson;

class SchemaGen {
 public:
  explicit SchemaGen(uint64_t seed) : rng_(seed) {}

  ojson Root() {
    ojson s = Value(0);
    if (Chance(0.3)) {  // a recursive definition referenced from the root
      s = ojson{{"$defs", {{"tree", {{"type", "object"},
                                     {"properties", {{"label", Value(2)},
                                                     {"kids", {{"type", "array"}, {"maxItems", 2},
                                                               {"items", {{"$ref", "#/$defs/tree"}}}}}}},
                                     {"required", {"label"}}}}}},
                {"type", "object"},
                {"properties", {{"root_node", {{"$ref", "#/$defs/tree"}}}, {"other", s}}},
                {"required", ojson::array({"root_node"})}};
    }
    return s;
  }

 private:
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  ojson Value(int depth) {
    int kind = Int(0, depth >= 3 ? 6 : 9);
    switch (kind) {
      case 0: return {{"type", "boolean"}};
      case 1: {
        ojson s = {{"type", Chance(0.3) ? ojson::array({"integer", "null"}) : ojson("integer")}};
        if (Chance(0.5)) s["minimum"] = Int(-50, 50);
        if (Chance(0.5)) s[Chance(0.5) ? "maximum" : "exclusiveMaximum"] = Int(60, 2000);
        return s;
      }
      case 2: return {{"type", "number"}};
      case 3: return String();
      case 4: return {{"enum", {"red", 7, nullptr, "gr\"een"}}};
      case 5: return {{"const", Chance(0.5) ? ojson("fixed") : ojson(42)}};
      case 6: return {{"type", "null"}};
      case 7: return Object(depth);
      case 8: return Array(depth);
      default: return {{"anyOf", {Value(depth + 1), Value(depth + 1)}}};
    }
  }

  ojson String() {
    ojson s = {{"type", "string"}};
    int k = Int(0, 3);
    if (k == 1) {
      s["minLength"] = Int(0, 3);
      s["maxLength"] = Int(3, 8);
    } else if (k == 2) {
      static const char* kPatterns[] = {"^[a-z]{2,5}$", "^\\d{3}-\\d{2}$", "^(yes|no|maybe)!?$", "^[A-Z][a-z]*( [A-Z][a-z]*)?$"};
      s["pattern"] = kPatterns[Int(0, 3)];
    } else if (k == 3) {
      static const char* kFormats[] = {"date", "time", "date-time", "uuid", "email", "ipv4"};
      s["format"] = kFormats[Int(0, 5)];
    }
    return s;
  }

  ojson Object(int depth) {
    ojson s = {{"type", "object"}};
    int n = Int(0, 4);
    if (n == 0) {
      s["additionalProperties"] = Chance(0.5) ? ojson(true) : Value(depth + 1);
      return s;
    }
    ojson props = ojson::object(), req = ojson::array();
    for (int i = 0; i < n; ++i) {
      std::string name = "field_" + std::to_string(Int(0, 99)) + (Chance(0.2) ? "_\xC3\xA9" : "");
      if (props.contains(name)) continue;
      props[name] = Value(depth + 1);
      if (Chance(0.5)) req.push_back(name);
    }
    s["properties"] = props;
    s["required"] = req;
    return s;
  }

  ojson Array(int depth) {
    ojson s = {{"type", "array"}};
    bool prefix = Chance(0.3);
    if (prefix) s["prefixItems"] = {Value(depth + 1), Value(depth + 1)};
    s["items"] = prefix && Chance(0.4) ? ojson(false) : Value(depth + 1);
    if (Chance(0.5)) s["minItems"] = Int(0, 2);
    if (Chance(0.5)) s["maxItems"] = Int(2, 4);
    return s;
  }

  std::mt19937_64 rng_;
};

std::shared_ptr<const Vocabulary> RandomVocab(std::mt19937_64& rng) {
  static const char* kFragments[] = {"{", "}", "[", "]", ",", ":", "\"", " ", "\n", "\t", "{\"", "\":", "\",", "\"}",
                                     "\"]", "],", "},", ": ", ", ", "true", "false", "null", "nu", "ll", "0", "1", "7",
                                     "42", "-", ".", "e", "E+", "field_", "red", "gr", "\\\"", "\\", "u00", "\xC3\xA9",
                                     "\xE4\xB8\xAD", "\xF0\x9F\x98\x80", "\xE4\xB8", "\xAD", "T", "Z", "@", "com", "fixed",
                                     "yes", "no", "!", "label", "kids", "root_node", "other", "abc", "A", "-0"};
  constexpr int kN = sizeof(kFragments) / sizeof(kFragments[0]);
  std::vector<std::string> toks;
  for (int b = 0; b < 256; ++b) toks.push_back(std::string(1, static_cast<char>(b)));
  for (const char* f : kFragments) toks.push_back(f);
  std::uniform_int_distribution<int> frag(0, kN - 1), len(2, 3);
  for (int i = 0; i < 300; ++i) {
    std::string t;
    for (int k = len(rng); k > 0; --k) t += kFragments[frag(rng)];
    toks.push_back(t);
  }
  toks.push_back("");  // EOS
  int32_t eos = static_cast<int32_t>(toks.size() - 1);
  return Vocabulary::Create(std::move(toks), {eos}).value();
}

struct WalkStats {
  int schemas = 0;
  int walks = 0;
  int completed = 0;
};

// Walks `seeds` random schemas; appends (schema, output) pairs to `dump`.
void RunWalks(uint64_t seeds, std::ofstream* dump, WalkStats* stats) {
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    ojson schema = SchemaGen(seed).Root();
    JsonSchemaOptions options;
    options.any_whitespace = seed % 2 == 0;
    auto g = CompileJsonSchema(schema.dump(), options);
    ASSERT_TRUE(g.ok()) << schema.dump() << " " << g.status().ToString();
    ++stats->schemas;
    auto vocab = RandomVocab(rng);
    auto compiled = CompiledGrammar::Compile(*g, vocab);
    for (int walk = 0; walk < 6; ++walk, ++stats->walks) {
      GrammarMatcher m(compiled);
      std::string out;
      for (int step = 0; step < 500; ++step) {
        std::vector<int32_t> allowed = testing::MaskIds(m);
        ASSERT_FALSE(allowed.empty()) << "dead end after " << out << " for " << schema.dump();
        if (walk < 2 && step < 40) {
          ASSERT_EQ(allowed, testing::BruteForceAllowed(m)) << out << " " << schema.dump();
        }
        int32_t eos = vocab->eos_ids()[0];
        bool can_end = allowed.back() == eos;
        int32_t pick = can_end && (allowed.size() == 1 || std::uniform_real_distribution<double>(0, 1)(rng) < 0.3)
                           ? eos
                           : allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1 - can_end)(rng)];
        ASSERT_TRUE(m.AcceptToken(pick));
        if (pick == eos) break;
        out += vocab->bytes(pick);
      }
      if (!m.IsTerminated()) continue;
      ++stats->completed;
      ojson value = ojson::parse(out, nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(value.is_discarded()) << "not JSON: " << out << " for " << schema.dump();
      EXPECT_TRUE(testing::Validate(value, schema, schema)) << out << " for " << schema.dump();
      if (dump && *dump) *dump << ojson{{"schema", schema}, {"output", out}}.dump() << "\n";
    }
  }
}

TEST(PropertyTest, RandomSchemasRandomWalksValidOutputs) {
  const char* dump_path = std::getenv("STRUCTURED_OUTPUT_DUMP");
  std::ofstream dump;
  if (dump_path) dump.open(dump_path, std::ios::app);
  const char* seeds_env = std::getenv("STRUCTURED_OUTPUT_SEEDS");  // more seeds for a local soak
  const uint64_t seeds = seeds_env ? std::strtoull(seeds_env, nullptr, 10) : 60;
  WalkStats stats;
  RunWalks(seeds, &dump, &stats);
  EXPECT_EQ(stats.schemas, static_cast<int>(seeds));
  EXPECT_GT(stats.completed, stats.walks / 2) << stats.completed << " of " << stats.walks << " walks completed";
}

// The same outputs checked by the npm `ajv` package (skipped where node or
// ajv is not installed: run `npm install` in the repository root).
TEST(PropertyTest, AjvAcceptsEveryOutput) {
  if (std::system("node -e \"require('ajv/dist/2020'); require('ajv-formats')\" >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node with ajv and ajv-formats not found";
  }
  std::string path = ::testing::TempDir() + "structured_output_pairs.jsonl";
  std::remove(path.c_str());
  {
    std::ofstream dump(path);
    WalkStats stats;
    RunWalks(30, &dump, &stats);
    ASSERT_GT(stats.completed, 0);
  }
  int rc = std::system(("node tests/engine_core/structured_output/validate_with_ajv.cjs " + path).c_str());
  EXPECT_EQ(rc, 0) << "ajv rejected outputs of " << path;
}

}  // namespace
}  // namespace llmserve::engine_core::structured_output
