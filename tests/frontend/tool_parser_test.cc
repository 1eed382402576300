// Tool-call parsers: whole-text extraction per parser, and streaming fed in
// pieces of every size reproducing it exactly.

#include "frontend/tool_parsers/tool_parser.h"

#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontend/tool_parsers/json_canon.h"

namespace llmserve::frontend::tool_parsers {
namespace {

std::unique_ptr<ToolParser> Parser(std::string_view name) {
  auto parser = MakeToolParser(name);
  EXPECT_TRUE(parser.ok()) << parser.status().ToString();
  return std::move(parser).value();
}

// DeepSeek V3's tags.
const std::string kDsCalls = "<｜tool▁calls▁begin｜>";
const std::string kDsCallsEnd = "<｜tool▁calls▁end｜>";
const std::string kDsCall = "<｜tool▁call▁begin｜>";
const std::string kDsCallEnd = "<｜tool▁call▁end｜>";
const std::string kDsSep = "<｜tool▁sep｜>";

std::string DsCall(const std::string& name, const std::string& args, bool close = true) {
  return kDsCall + "function" + kDsSep + name + "\n```json\n" + args +
         (close ? "\n```" + kDsCallEnd : "");
}

// Outputs that hold calls, per parser.
std::vector<std::string> CallTexts(std::string_view parser) {
  if (parser == "hermes") {
    return {
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
        "Let me check.\n<tool_call>\n{\"name\":\"a\",\"arguments\":{\"x\":[1, 2.50,{}]}}\n</tool_call>\n"
        "<tool_call>\n{\"arguments\": {\"s\": \"Zürich \\u00e9t\\u00e9 \\ud83d\\ude00\"}, \"name\": \"b\"}\n</tool_call>",
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"q\": \"a<tool_call>b\\n\\\"c\\\"\"}}",
        "<tool_call>{\"name\": \"f\", \"arguments\": 1e3}</tool_call>",
    };
  }
  if (parser == "llama3_json") {
    return {
        "<|python_tag|>{\"name\": \"search\", \"parameters\": {\"query\": \"żółw\"}}",
        "{\"name\": \"a\", \"arguments\": {\"n\": -0}}; {\"name\": \"b\", \"parameters\": {}}",
        "Checking. <|python_tag|>{\"name\": \"f\", \"parameters\": {\"x\": true, \"y\": null}};",
    };
  }
  if (parser == "mistral") {
    return {
        "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"a\": \"b\"}}]",
        "Sure. [TOOL_CALLS][{\"name\":\"f\",\"arguments\":{\"a\":1}},{\"name\":\"g\",\"arguments\":{\"t\":\"日本\"}}]",
        "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}",
    };
  }
  return {
      kDsCalls + DsCall("get_weather", "{\"city\": \"Tokyo\"}") + kDsCallsEnd,
      "I will look.\n" + kDsCalls + DsCall("a", "{\"x\": 1}") + DsCall("b", "{\"y\": \"東京\"}") + kDsCallsEnd,
      kDsCalls + DsCall("f", "{\"a\": 1}", false),
  };
}

const std::vector<std::string> kParsers = {"hermes", "llama3_json", "mistral", "deepseek_v3"};

// What a stream sent, put together.
struct Streamed {
  std::string content;
  std::vector<ToolCall> calls;  // id, name, concatenated arguments
};

// Feeds `text` in pieces of the given sizes (the last piece takes the rest),
// checking the order of the deltas as it goes.
Streamed Stream(const ToolParser& parser, const std::string& text, const std::vector<size_t>& sizes) {
  auto stream = parser.NewStream();
  Streamed got;
  auto take = [&](const DeltaMessage& delta) {
    if (delta.content) got.content += *delta.content;
    for (const DeltaToolCall& d : delta.tool_calls) {
      if (d.name) {
        ASSERT_EQ(d.index, static_cast<int>(got.calls.size()));
        ASSERT_TRUE(d.id.has_value());
        ASSERT_EQ(d.type.value_or(""), "function");
        got.calls.push_back({*d.id, *d.name, ""});
      } else {
        ASSERT_LT(d.index, static_cast<int>(got.calls.size()));
        ASSERT_TRUE(d.arguments.has_value());
        got.calls[static_cast<size_t>(d.index)].arguments += *d.arguments;
      }
    }
  };
  size_t pos = 0;
  for (size_t i = 0; pos < text.size(); ++i) {
    size_t n = i < sizes.size() ? sizes[i] : text.size() - pos;
    take(stream->Feed(std::string_view(text).substr(pos, n)));
    pos += std::min(n, text.size() - pos);
  }
  take(stream->Finish());
  EXPECT_EQ(stream->calls_started(), static_cast<int>(got.calls.size()));
  return got;
}

// Piece sizes: ones, random 1..7 (fixed seed), and the whole text.
std::vector<std::vector<size_t>> Chunkings(size_t len, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> size(1, 7);
  std::vector<size_t> random;
  for (size_t total = 0; total < len; total += random.back()) random.push_back(size(rng));
  return {std::vector<size_t>(len, 1), random, {}};
}

void ExpectStreamMatches(const ToolParser& parser, const std::string& text) {
  ExtractedToolCalls whole = parser.Extract(text);
  for (unsigned seed = 1; seed <= 4; ++seed) {
    for (const auto& sizes : Chunkings(text.size(), seed)) {
      Streamed got = Stream(parser, text, sizes);
      if (!whole.tools_called) {
        EXPECT_EQ(got.content, text);
        EXPECT_TRUE(got.calls.empty());
        continue;
      }
      EXPECT_EQ(got.content, whole.content.value_or("")) << text;
      ASSERT_EQ(got.calls.size(), whole.calls.size()) << text;
      for (size_t i = 0; i < got.calls.size(); ++i) {
        EXPECT_EQ(got.calls[i].name, whole.calls[i].name);
        EXPECT_EQ(got.calls[i].arguments, whole.calls[i].arguments) << text;
      }
    }
  }
}

TEST(ToolParserFactory, KnowsFourNamesAndRejectsOthers) {
  for (const std::string& name : ToolParserNames()) EXPECT_EQ(Parser(name)->name(), name);
  EXPECT_EQ(ToolParserNames().size(), 4u);
  auto bad = MakeToolParser("pythonic");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("hermes"), std::string::npos);
  // vLLM's adjust_request turns skip_special_tokens off for these two.
  EXPECT_TRUE(Parser("hermes")->NeedsSpecialTokens());
  EXPECT_TRUE(Parser("mistral")->NeedsSpecialTokens());
  EXPECT_FALSE(Parser("llama3_json")->NeedsSpecialTokens());
  EXPECT_FALSE(Parser("deepseek_v3")->NeedsSpecialTokens());
}

TEST(ToolParserJson, CanonicalFormIsPythonDumps) {
  std::string out;
  ASSERT_TRUE(CanonicalJson(" {\"x\" : 1.50,\"y\":1e3, \"z\":-0, \"big\": 12345678901234567890,"
                            "\"t\":true,\"n\":null,\"a\":[ ],\"o\":{ },\"e\":1E-7}\n", &out));
  EXPECT_EQ(out, "{\"x\": 1.5, \"y\": 1000.0, \"z\": 0, \"big\": 12345678901234567890, \"t\": true, "
                 "\"n\": null, \"a\": [], \"o\": {}, \"e\": 1e-07}");
  ASSERT_TRUE(CanonicalJson(R"(["a\nb \"q\" \/ \u0001 \u00e9 \ud83d\ude00 é"])", &out));
  EXPECT_EQ(out, "[\"a\\nb \\\"q\\\" / \\u0001 é 😀 é\"]");
  for (const char* bad : {"{\"a\":}", "[1,]", "01", "{\"a\" 1}", "\"\\ud83d\"", "nul", "1 2", "NaN"})
    EXPECT_FALSE(CanonicalJson(bad, &out)) << bad;
}

TEST(ToolParserJson, FloatsAsPythonRepr) {
  const std::vector<std::pair<double, std::string>> cases = {
      {1e16, "1e+16"}, {1e15, "1000000000000000.0"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
      {1.5e300, "1.5e+300"}, {0.1, "0.1"}, {-2.5, "-2.5"}, {123.456, "123.456"}, {0.0, "0.0"},
      {-0.0, "-0.0"}, {5e-324, "5e-324"}, {std::numeric_limits<double>::infinity(), "Infinity"}};
  for (const auto& [value, repr] : cases) EXPECT_EQ(PyFloatRepr(value), repr);
}

// A whole output and what Extract must find in it.
struct Case {
  std::string parser;
  std::string text;
  std::optional<std::string> content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
};

TEST(ToolParserAll, ExtractsCallsContentAndArguments) {
  auto texts = [](const char* p, size_t i) { return CallTexts(p)[i]; };
  const std::vector<Case> cases = {
      {"hermes", texts("hermes", 0), std::nullopt, {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"hermes", texts("hermes", 1), "Let me check.\n",  // several, unicode
       {{"a", "{\"x\": [1, 2.5, {}]}"}, {"b", "{\"s\": \"Zürich été 😀\"}"}}},
      {"hermes", texts("hermes", 2), std::nullopt, {{"f", "{\"q\": \"a<tool_call>b\\n\\\"c\\\"\"}"}}},
      {"hermes", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\": \"b\", "
                 "\"arguments\": {\"k\" :2}}\n</tool_", std::nullopt, {{"a", "{}"}, {"b", "{\"k\": 2}"}}},
      {"llama3_json", texts("llama3_json", 0), std::nullopt, {{"search", "{\"query\": \"żółw\"}"}}},
      {"llama3_json", texts("llama3_json", 1), std::nullopt, {{"a", "{\"n\": 0}"}, {"b", "{}"}}},
      {"llama3_json", texts("llama3_json", 2), "Checking. ", {{"f", "{\"x\": true, \"y\": null}"}}},
      {"mistral", texts("mistral", 0), std::nullopt, {{"f", "{\"a\": \"b\"}"}}},
      {"mistral", texts("mistral", 1), "Sure. ", {{"f", "{\"a\": 1}"}, {"g", "{\"t\": \"日本\"}"}}},
      {"mistral", texts("mistral", 2), std::nullopt, {{"f", "{}"}}},  // unclosed array
      {"deepseek_v3", texts("deepseek_v3", 0), std::nullopt, {{"get_weather", "{\"city\": \"Tokyo\"}"}}},
      {"deepseek_v3", texts("deepseek_v3", 1), "I will look.\n", {{"a", "{\"x\": 1}"}, {"b", "{\"y\": \"東京\"}"}}},
      {"deepseek_v3", kDsCalls + DsCall("f", "{\"a\":1}", false) + "\n``", std::nullopt, {{"f", "{\"a\":1}"}}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.parser + ": " + c.text);
    ExtractedToolCalls r = Parser(c.parser)->Extract(c.text);
    ASSERT_TRUE(r.tools_called);
    EXPECT_EQ(r.content, c.content);
    ASSERT_EQ(r.calls.size(), c.calls.size());
    for (size_t i = 0; i < r.calls.size(); ++i) {
      EXPECT_EQ(r.calls[i].name, c.calls[i].first);
      EXPECT_EQ(r.calls[i].arguments, c.calls[i].second);
      EXPECT_EQ(r.calls[i].id.size(), c.parser == "mistral" ? 9u : 46u);
      EXPECT_EQ(r.calls[i].id.rfind("chatcmpl-tool-", 0) == 0, c.parser != "mistral");
      EXPECT_TRUE(i == 0 || r.calls[i].id != r.calls[i - 1].id);
    }
  }
}

TEST(ToolParserAll, MalformedOrPlainOutputIsAllContent) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"hermes",
       {"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}</tool_call>", "<tool_call>{\"name\": \"f\"}</tool_call>",
        "<tool_call>{\"name\": 7, \"arguments\": {}}</tool_call>", "<tool_call></tool_call>",
        "ok <tool_call>{\"name\": \"f\", \"arguments\": {}} extra</tool_call>", "just text"}},
      {"llama3_json",
       {"{\"name\": \"f\", \"parameters\": {\"a\": }}", "{\"result\": 5}", "The answer is {x}.",
        "<|python_tag|>{\"name\": \"f\"}", "{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\""}},
      {"mistral",
       {"[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": }]", "[TOOL_CALLS] {\"name\": \"f\"}", "[TOOL_CALLS] []",
        "a [TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}] [TOOL_CALLS]"}},
      {"deepseek_v3",
       {kDsCalls + kDsCall + "function" + kDsSep + "f\n{\"a\": 1}" + kDsCallEnd,
        kDsCalls + kDsCall + "tool" + kDsSep + "f\n```json\n{}\n```" + kDsCallEnd, kDsCalls + kDsCallsEnd,
        kDsCalls + kDsCall + "function" + kDsSep + "f"}}};
  for (const auto& [name, texts] : cases) {
    for (const std::string& text : texts) {
      auto r = Parser(name)->Extract(text);
      EXPECT_FALSE(r.tools_called) << name << ": " << text;
      EXPECT_TRUE(r.calls.empty());
      EXPECT_EQ(r.content.value_or(""), text);
    }
  }
}

TEST(ToolParserStreaming, PiecesOfAnySizeReproduceExtract) {
  for (const std::string& name : kParsers) {
    auto parser = Parser(name);
    for (const std::string& text : CallTexts(name)) {
      SCOPED_TRACE(name + ": " + text);
      ASSERT_TRUE(parser->Extract(text).tools_called);
      ExpectStreamMatches(*parser, text);
    }
  }
}

TEST(ToolParserStreaming, TextWithoutCallsIsAllContent) {
  const std::vector<std::string> texts = {
      "plain answer", "a <tool_c", "<|python_ta", "[TOOL_CALLS", "x <｜tool▁calls", "{\"result\": 5}",
      "<tool_call>{\"oops\"", "", "  \n"};
  for (const std::string& name : kParsers) {
    for (const std::string& text : texts) {
      SCOPED_TRACE(name + ": " + text);
      ExpectStreamMatches(*Parser(name), text);
    }
  }
}

TEST(ToolParserStreaming, PartialStartTagIsHeldBack) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hermes", "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"},
      {"llama3_json", "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}"},
      {"mistral", "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}]"},
      {"deepseek_v3", kDsCalls + DsCall("f", "{}") + kDsCallsEnd}};
  for (const auto& [name, calls] : cases) {
    auto stream = Parser(name)->NewStream();
    std::string content;
    for (char c : "Hi " + calls) {
      DeltaMessage d = stream->Feed(std::string(1, c));
      content += d.content.value_or("");
      EXPECT_EQ(content.find_first_of("<[{"), std::string::npos) << name << ": " << content;
    }
    content += stream->Finish().content.value_or("");
    EXPECT_EQ(content, "Hi ") << name;
    EXPECT_EQ(stream->calls_started(), 1) << name;
  }
}

TEST(ToolParserStreaming, HeaderComesBeforeArgumentsAndFinishFlushesContent) {
  auto stream = Parser("hermes")->NewStream();
  DeltaMessage d = stream->Feed("<tool_call>{\"name\": \"f\", \"argu");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name.value_or(""), "f");
  EXPECT_FALSE(d.tool_calls[0].arguments.has_value());
  d = stream->Feed("ments\": {\"q\": \"ab");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].arguments.value_or(""), "{\"q\": \"ab");
  EXPECT_FALSE(d.tool_calls[0].id.has_value());

  auto plain = Parser("hermes")->NewStream();
  EXPECT_EQ(plain->Feed("so <tool_").content.value_or(""), "so ");
  EXPECT_EQ(plain->Finish().content.value_or(""), "<tool_");
}

}  // namespace
}  // namespace llmserve::frontend::tool_parsers
