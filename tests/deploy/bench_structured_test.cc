// The --structured-output mode of `llmserve bench serve`: flags, which requests
// are constrained, request bodies, validity counting, the report, and that the
// built-in corpus compiles with the server's grammar front ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "deploy/bench/report.h"
#include "deploy/bench/serve_bench.h"
#include "deploy/bench/structured_corpus.h"
#include "deploy/bench/structured_output.h"
#include "engine_core/structured_output/ebnf.h"
#include "engine_core/structured_output/json_schema.h"
#include "engine_core/structured_output/regex.h"

namespace llmserve::deploy::bench {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

StatusOr<ServeBenchOptions> Parse(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "bench serve");
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(s.data());
  ArgParser p("usage", ServeBenchArgSpecs());
  LLMSERVE_RETURN_IF_ERROR(p.Parse(static_cast<int>(a.size()), a.data()));
  return ServeBenchOptionsFromArgs(p);
}

std::string ErrorOf(std::vector<std::string> argv) { return Parse(std::move(argv)).status().message(); }

// A file under the test's temp directory holding `text`.
std::string TempFile(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / (std::to_string(getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(BenchStructured, FlagsParseAndDefaultToOff) {
  auto off = Parse({});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(off->structured.mode, StructuredMode::kNone);
  EXPECT_DOUBLE_EQ(off->structured.ratio, 1.0);
  auto on = Parse({"--structured-output", "regex", "--structured_output_ratio=0.25"});
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_EQ(on->structured.mode, StructuredMode::kRegex);
  EXPECT_DOUBLE_EQ(on->structured.ratio, 0.25);
  for (const char* mode : {"json", "json_object", "regex", "choice", "grammar", "none"}) {
    auto o = Parse({"--structured-output", mode});
    ASSERT_TRUE(o.ok()) << mode;
    EXPECT_EQ(StructuredModeName(o->structured.mode), mode);
  }
}

TEST(BenchStructured, BadValuesNameTheFlag) {
  EXPECT_NE(ErrorOf({"--structured-output", "xml"}).find("--structured-output must be"), std::string::npos);
  EXPECT_NE(ErrorOf({"--structured-output", "json", "--structured-output-ratio", "1.5"})
                .find("--structured-output-ratio must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--structured-output", "json", "--structured-output-ratio", "half"})
                .find("--structured-output-ratio expects a number"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--structured-output-ratio", "0.5"}).find("needs --structured-output"), std::string::npos);
  const std::string schema = TempFile("one.json", R"({"type":"object"})");
  EXPECT_NE(ErrorOf({"--structured-output", "regex", "--structured-output-schema", schema})
                .find("--structured-output-schema needs --structured-output json"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"--structured-output", "json", "--structured-output-schema", "/nonexistent/s.json"})
                .find("--structured-output-schema: cannot read"),
            std::string::npos);
  for (const char* bad : {"not json", "[]", "[1]", "3"}) {
    const std::string path = TempFile("bad.json", bad);
    EXPECT_NE(ErrorOf({"--structured-output", "json", "--structured-output-schema", path})
                  .find("--structured-output-schema"),
              std::string::npos)
        << bad;
  }
}

TEST(BenchStructured, SchemaFileReplacesTheBuiltInCorpus) {
  const std::string one = TempFile("s1.json", R"({"type":"object","required":["z","a"]})");
  auto o = Parse({"--structured-output", "json", "--structured-output-schema", one});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_EQ(o->structured.schemas.size(), 1u);
  EXPECT_EQ(o->structured.schemas[0].dump(), R"({"type":"object","required":["z","a"]})");  // order kept
  const std::string two = TempFile("s2.json", R"([{"type":"integer"},{"type":"boolean"}])");
  o = Parse({"--structured-output", "json", "--structured-output-schema", two});
  ASSERT_TRUE(o.ok());
  const auto plan = PlanConstraints(o->structured, 4, 0);
  ASSERT_TRUE(plan[0] && plan[1] && plan[2] && plan[3]);
  EXPECT_EQ(plan[0]->value["type"], "integer");
  EXPECT_EQ(plan[1]->value["type"], "boolean");
  EXPECT_EQ(plan[2]->value["type"], "integer");
}

TEST(BenchStructured, RatioChoosesADeterministicSubset) {
  StructuredOutputOptions s;
  s.mode = StructuredMode::kChoice;
  s.ratio = 0.3;
  const auto a = PlanConstraints(s, 100, 7), b = PlanConstraints(s, 100, 7), c = PlanConstraints(s, 100, 8);
  size_t count = 0, same = 0;
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(a[i].has_value(), b[i].has_value());
    if (a[i]) {
      EXPECT_EQ(a[i]->value, b[i]->value);
    }
    count += a[i].has_value();
    same += a[i].has_value() == c[i].has_value();
  }
  EXPECT_EQ(count, 30u);
  EXPECT_LT(same, 100u);  // another seed picks other requests
  s.ratio = 0;
  for (const auto& p : PlanConstraints(s, 10, 1)) EXPECT_FALSE(p);
  s.ratio = 1;
  const auto all = PlanConstraints(s, 10, 1);
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(all[i]);
    EXPECT_EQ(all[i]->value, ordered_json(BuiltinChoices()[i % BuiltinChoices().size()]));
  }
  s.mode = StructuredMode::kNone;
  for (const auto& p : PlanConstraints(s, 10, 1)) EXPECT_FALSE(p);
}

TEST(BenchStructured, ChatSendsJsonInResponseFormatOtherKindsInStructuredOutputs) {
  ServeBenchOptions o = *Parse({"--backend", "openai-chat"});
  const SampleRequest s{"hi", 1, 16};
  const Constraint schema{StructuredMode::kJson, BuiltinJsonSchemas()[0]};
  json body = json::parse(RequestBody(o, "m", s, &schema));
  EXPECT_EQ(body["response_format"]["type"], "json_schema");
  EXPECT_TRUE(body["response_format"]["json_schema"]["name"].is_string());
  EXPECT_EQ(body["response_format"]["json_schema"]["schema"], json::parse(BuiltinJsonSchemas()[0].dump()));
  EXPECT_FALSE(body.contains("structured_outputs"));
  EXPECT_FALSE(body.contains("ignore_eos"));  // the random dataset's implicit ignore_eos is dropped
  const Constraint object{StructuredMode::kJsonObject, true};
  body = json::parse(RequestBody(o, "m", s, &object));
  EXPECT_EQ(body["response_format"], json({{"type", "json_object"}}));
  const Constraint regex{StructuredMode::kRegex, "[a-z]+"};
  body = json::parse(RequestBody(o, "m", s, &regex));
  EXPECT_EQ(body["structured_outputs"], json({{"regex", "[a-z]+"}}));
  EXPECT_FALSE(body.contains("response_format"));
  body = json::parse(RequestBody(o, "m", s));
  EXPECT_FALSE(body.contains("structured_outputs") || body.contains("response_format"));
  EXPECT_EQ(body["ignore_eos"], true);  // unconstrained requests keep it
}

TEST(BenchStructured, CompletionsSendEveryKindInStructuredOutputs) {
  ServeBenchOptions o = *Parse({"--ignore-eos", "--extra-body", R"({"seed":3})"});
  const SampleRequest s{"hi", 1, 16};
  const Constraint schema{StructuredMode::kJson, ordered_json{{"type", "object"}}};
  json body = json::parse(RequestBody(o, "m", s, &schema));
  EXPECT_EQ(body["structured_outputs"], json({{"json", {{"type", "object"}}}}));
  EXPECT_FALSE(body.contains("response_format"));
  EXPECT_EQ(body["ignore_eos"], true);  // asked for explicitly
  EXPECT_EQ(body["seed"], 3);
  const Constraint object{StructuredMode::kJsonObject, true};
  EXPECT_EQ(json::parse(RequestBody(o, "m", s, &object))["structured_outputs"], json({{"json_object", true}}));
  const Constraint choice{StructuredMode::kChoice, ordered_json::array({"a", "b"})};
  EXPECT_EQ(json::parse(RequestBody(o, "m", s, &choice))["structured_outputs"], json({{"choice", {"a", "b"}}}));
  const Constraint grammar{StructuredMode::kGrammar, "root ::= \"x\""};
  EXPECT_EQ(json::parse(RequestBody(o, "m", s, &grammar))["structured_outputs"],
            json({{"grammar", "root ::= \"x\""}}));
}

TEST(BenchStructured, ValidityFollowsTheModeRules) {
  const Constraint schema{StructuredMode::kJson, ordered_json::parse(R"({"required":["a","b"]})")};
  EXPECT_TRUE(ConstrainedOutputValid(schema, R"({"a":1,"b":[]})", "length"));
  EXPECT_FALSE(ConstrainedOutputValid(schema, R"({"a":1})", "stop"));
  EXPECT_FALSE(ConstrainedOutputValid(schema, R"({"a":1,"b":)", "length"));
  EXPECT_FALSE(ConstrainedOutputValid(schema, "[1]", "stop"));
  const Constraint object{StructuredMode::kJsonObject, true};
  EXPECT_TRUE(ConstrainedOutputValid(object, " {\"x\": null} ", "stop"));
  EXPECT_FALSE(ConstrainedOutputValid(object, "{\"x\"", "length"));
  for (StructuredMode m : {StructuredMode::kRegex, StructuredMode::kChoice, StructuredMode::kGrammar}) {
    const Constraint c{m, "x"};
    EXPECT_TRUE(ConstrainedOutputValid(c, "abc", "stop"));
    EXPECT_FALSE(ConstrainedOutputValid(c, "abc", "length"));
    EXPECT_FALSE(ConstrainedOutputValid(c, "", "stop"));
  }
}

TEST(BenchStructured, CountsOnlyConstrainedSuccessfulValidAnswers) {
  std::vector<std::optional<Constraint>> plan(4);
  plan[0] = Constraint{StructuredMode::kChoice, ordered_json::array({"yes"})};
  plan[2] = plan[0];
  plan[3] = plan[0];
  std::vector<RequestOutput> out(4);
  for (auto& o : out) {
    o.success = true;
    o.generated_text = "yes";
    o.finish_reason = "stop";
  }
  out[3].success = false;  // failed requests are invalid
  BenchmarkMetrics m;
  CountStructuredOutputs(plan, out, &m);
  EXPECT_EQ(m.structured_requests, 3);
  EXPECT_EQ(m.structured_valid, 2);
}

TEST(BenchStructured, StreamKeepsTheFinishReason) {
  RequestOutput o;
  StreamAccumulator acc(ApiKind::kChat, 0, &o);
  acc.OnEvent(R"({"choices":[{"delta":{"content":"yes"},"finish_reason":null}]})", 1);
  acc.OnEvent(R"({"choices":[{"delta":{},"finish_reason":"stop"}]})", 2);
  acc.Finish();
  EXPECT_EQ(o.generated_text, "yes");
  EXPECT_EQ(o.finish_reason, "stop");
}

TEST(BenchStructured, ReportShowsTheCountsOnlyWhenOn) {
  ServeBenchOptions o = *Parse({});
  BenchmarkMetrics m;
  m.structured_requests = 5;
  m.structured_valid = 4;
  EXPECT_FALSE(ResultJson(o, {}, m, {}).contains("structured_valid"));
  EXPECT_EQ(ResultTable(o, {}, m).find("Structured"), std::string::npos);
  o = *Parse({"--structured-output", "json"});
  const json j = ResultJson(o, {}, m, {});
  EXPECT_EQ(j["structured_output"], "json");
  EXPECT_EQ(j["structured_requests"], 5);
  EXPECT_EQ(j["structured_valid"], 4);
  EXPECT_NE(ResultTable(o, {}, m).find("Structured outputs valid:"), std::string::npos);
}

TEST(BenchStructured, BuiltInCorpusCompilesWithTheServersFrontEnds) {
  namespace so = engine_core::structured_output;
  EXPECT_GE(BuiltinJsonSchemas().size(), 10u);
  for (const auto& s : BuiltinJsonSchemas()) {
    auto g = so::CompileJsonSchema(s.dump(), so::JsonSchemaOptions{.any_whitespace = false});
    EXPECT_TRUE(g.ok()) << s.dump() << ": " << g.status().ToString();
    ASSERT_TRUE(s.contains("required"));
  }
  for (const auto& r : BuiltinRegexes()) {
    auto g = so::CompileRegex(r);
    EXPECT_TRUE(g.ok()) << r << ": " << g.status().ToString();
  }
  for (const auto& c : BuiltinChoices()) EXPECT_TRUE(so::CompileChoice(c).ok());
  for (const auto& text : BuiltinGrammars()) {
    auto g = so::CompileEbnf(text);
    EXPECT_TRUE(g.ok()) << text << ": " << g.status().ToString();
  }
}

}  // namespace
}  // namespace llmserve::deploy::bench
