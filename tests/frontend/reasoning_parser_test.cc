// Reasoning parsers: whole-text splits as vLLM main makes them, and streams
// fed in pieces of every size giving the same split.

#include "frontend/reasoning/reasoning_parser.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace llmserve::frontend::reasoning {
namespace {

std::unique_ptr<ReasoningParser> Parser(std::string_view name, ReasoningOptions options = {}) {
  auto parser = MakeReasoningParser(name, options);
  EXPECT_TRUE(parser.ok()) << parser.status().ToString();
  return std::move(parser).value();
}

using Split = std::pair<std::optional<std::string>, std::optional<std::string>>;

Split Of(const ReasoningSplit& s) { return {s.reasoning, s.content}; }

const std::optional<std::string> kNone = std::nullopt;

// Streams `text` in pieces of `sizes` (then the rest) and joins the output.
std::pair<std::string, std::string> Stream(const ReasoningParser& parser, const std::string& text,
                                           const std::vector<size_t>& sizes) {
  ReasoningStream stream = parser.NewStream();
  std::string reasoning, content;
  auto take = [&](const ReasoningSplit& s) {
    reasoning += s.reasoning.value_or("");
    content += s.content.value_or("");
    EXPECT_FALSE(s.reasoning && s.reasoning->empty());
    EXPECT_FALSE(s.content && s.content->empty());
  };
  size_t pos = 0;
  for (size_t i = 0; pos < text.size(); ++i) {
    size_t n = i < sizes.size() ? std::min(sizes[i], text.size() - pos) : text.size() - pos;
    take(stream.Feed(std::string_view(text).substr(pos, n)));
    pos += n;
  }
  take(stream.Finish());
  return {reasoning, content};
}

void ExpectStreamMatches(const ReasoningParser& parser, const std::string& text) {
  ReasoningSplit whole = parser.Extract(text);
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size(1, 6);
  for (int round = 0; round < 4; ++round) {
    std::vector<size_t> sizes;
    if (round == 0) sizes.assign(text.size(), 1);
    if (round >= 2) {
      for (size_t t = 0; t < text.size(); t += sizes.back()) sizes.push_back(size(rng));
    }
    auto [reasoning, content] = Stream(parser, text, sizes);
    EXPECT_EQ(reasoning, whole.reasoning.value_or("")) << parser.name() << ": " << text;
    EXPECT_EQ(content, whole.content.value_or("")) << parser.name() << ": " << text;
  }
}

TEST(ReasoningParserFactory, KnowsNamesAndRejectsOthers) {
  EXPECT_EQ(ReasoningParserNames(), (std::vector<std::string>{"deepseek_r1", "qwen3"}));
  EXPECT_EQ(Parser("qwen3")->name(), "qwen3");
  auto bad = MakeReasoningParser("granite");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("deepseek_r1"), std::string::npos);
  EXPECT_EQ(ReasoningParser::end_tag(), "</think>");
}

TEST(ReasoningParserDeepSeekR1, SplitsAtEndTagWithOptionalStart) {
  auto p = Parser("deepseek_r1");
  EXPECT_EQ(Of(p->Extract("<think>abc</think>xyz")), Split("abc", "xyz"));
  EXPECT_EQ(Of(p->Extract("abc</think>xyz")), Split("abc", "xyz"));
  EXPECT_EQ(Of(p->Extract("abc</think>")), Split("abc", kNone));
  EXPECT_EQ(Of(p->Extract("</think>xyz")), Split("", "xyz"));
  EXPECT_EQ(Of(p->Extract("<think>\nstill thinking")), Split("\nstill thinking", kNone));
  EXPECT_EQ(Of(p->Extract("abc <tool_call>x")), Split("abc <tool_call>x", kNone));
  EXPECT_EQ(Of(p->Extract("a</think>b</think>c")), Split("a", "b</think>c"));
}

TEST(ReasoningParserQwen3, ThinkingOnSplitsAndToolCallEndsReasoning) {
  auto p = Parser("qwen3");
  EXPECT_EQ(Of(p->Extract("<think>\nabc\n</think>\n\nxyz")), Split("\nabc\n", "\n\nxyz"));
  EXPECT_EQ(Of(p->Extract("abc</think>xyz")), Split("abc", "xyz"));
  EXPECT_EQ(Of(p->Extract("truncated reasoning")), Split("truncated reasoning", kNone));
  EXPECT_EQ(Of(p->Extract("plan<tool_call>\n{\"name\": \"f\"}\n</tool_call>")),
            Split("plan", "<tool_call>\n{\"name\": \"f\"}\n</tool_call>"));
  EXPECT_EQ(Of(p->Extract("<tool_call>x")), Split(kNone, "<tool_call>x"));
}

TEST(ReasoningParserQwen3, ThinkingOffIsContentUnlessEndTag) {
  auto p = Parser("qwen3", {.enable_thinking = false});
  EXPECT_EQ(Of(p->Extract("just the answer")), Split(kNone, "just the answer"));
  EXPECT_EQ(Of(p->Extract("abc</think>xyz")), Split("abc", "xyz"));
  EXPECT_EQ(Of(p->Extract("a <tool_call>b")), Split(kNone, "a <tool_call>b"));
  // Streaming: the template closed the think block, so everything is content.
  ReasoningStream stream = p->NewStream();
  EXPECT_TRUE(stream.reasoning_ended());
  EXPECT_EQ(Of(stream.Feed("<think>x</think>")), Split(kNone, "<think>x</think>"));
}

TEST(ReasoningParserBoth, PromptThatEndedReasoningMakesAllContent) {
  for (const char* name : {"deepseek_r1", "qwen3"}) {
    auto p = Parser(name, {.prompt_is_reasoning_end = true});
    EXPECT_EQ(Of(p->Extract("abc</think>xyz")), Split(kNone, "abc</think>xyz"));
    ReasoningStream stream = p->NewStream();
    EXPECT_EQ(Of(stream.Feed("abc</th")), Split(kNone, "abc</th"));
    EXPECT_TRUE(stream.Finish().empty());
  }
}

TEST(ReasoningParserStreaming, TagSplitAcrossDeltasIsHeldBack) {
  auto p = Parser("deepseek_r1");
  ReasoningStream stream = p->NewStream();
  EXPECT_EQ(Of(stream.Feed("<th")), Split(kNone, kNone));
  EXPECT_EQ(Of(stream.Feed("ink>abc</th")), Split("abc", kNone));
  EXPECT_FALSE(stream.reasoning_ended());
  EXPECT_EQ(Of(stream.Feed("ink>xy")), Split(kNone, "xy"));
  EXPECT_TRUE(stream.reasoning_ended());
  EXPECT_EQ(Of(stream.Feed("z")), Split(kNone, "z"));
  EXPECT_TRUE(stream.Finish().empty());

  ReasoningStream cut = p->NewStream();  // no end tag: what was held back is reasoning
  EXPECT_EQ(Of(cut.Feed("abc</thi")), Split("abc", kNone));
  EXPECT_EQ(Of(cut.Finish()), Split("</thi", kNone));

  ReasoningStream tool = Parser("qwen3")->NewStream();
  EXPECT_EQ(Of(tool.Feed("plan<tool_")), Split("plan", kNone));
  EXPECT_EQ(Of(tool.Feed("call>{")), Split(kNone, "<tool_call>{"));
}

TEST(ReasoningParserStreaming, PiecesOfAnySizeReproduceExtract) {
  const std::vector<std::string> texts = {
      "<think>abc</think>xyz", "abc</think>xyz", "abc</think>", "</think>xyz", "<think>\nno end",
      "x<think>y</think>z<think>w", "think <thin k> </thin", "plan<tool_call>\n{}\n</tool_call>",
      "é🙂<think>ü</think>東京", ""};
  for (const char* name : {"deepseek_r1", "qwen3"}) {
    auto p = Parser(name);
    for (const std::string& text : texts) ExpectStreamMatches(*p, text);
  }
  auto off = Parser("qwen3", {.enable_thinking = false, .prompt_is_reasoning_end = true});
  for (const std::string& text : texts) ExpectStreamMatches(*off, text);
}

}  // namespace
}  // namespace llmserve::frontend::reasoning
