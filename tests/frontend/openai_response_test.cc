// Response and streaming-chunk objects compared against the JSON vLLM sends.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "frontend/openai/responses.h"
#include "frontend/openai/server_info.h"
#include "frontend/openai/tokenize_request.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;

const ResponseMeta kMeta{"cmpl-1", 1700000000, "tiny"};

TEST(OpenAiResponse, Completion) {
  CompletionChoice a;
  a.index = 0;
  a.text = " world";
  a.finish_reason = "length";
  CompletionChoice b;
  b.index = 1;
  b.text = "!";
  b.finish_reason = "stop";
  b.stop_reason = std::string("\n");
  Usage usage{5, 7, 3};
  json want = json::parse(R"({"id": "cmpl-1", "object": "text_completion", "created": 1700000000, "model": "tiny",
    "choices": [
      {"index": 0, "text": " world", "logprobs": null, "finish_reason": "length", "stop_reason": null},
      {"index": 1, "text": "!", "logprobs": null, "finish_reason": "stop", "stop_reason": "\n"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12, "prompt_tokens_details": {"cached_tokens": 3}}})");
  EXPECT_EQ(CompletionResponse(kMeta, {a, b}, usage), want);
}

TEST(OpenAiResponse, CompletionLogprobs) {
  CompletionChoice c;
  c.text = "ab";
  c.text_offset = 4;
  c.logprobs = std::vector<TokenLogprob>{{"a", -0.5, {{"a", -0.5}, {"x", -1.5}}},
                                          {"b", -INFINITY, {{"b", -INFINITY}}}};
  c.finish_reason = "stop";
  c.stop_reason = 2;
  json want = json::parse(R"({"id": "cmpl-1", "object": "text_completion", "created": 1700000000, "model": "tiny",
    "choices": [{"index": 0, "text": "ab", "finish_reason": "stop", "stop_reason": 2,
      "logprobs": {"tokens": ["a", "b"], "token_logprobs": [-0.5, -9999.0], "text_offset": [4, 5],
                   "top_logprobs": [{"a": -0.5, "x": -1.5}, {"b": -9999.0}]}}]})");
  EXPECT_EQ(CompletionChunk(kMeta, c), want);
  EXPECT_EQ(CompletionUsageChunk(kMeta, Usage{2, 3, std::nullopt}),
            json::parse(R"({"id": "cmpl-1", "object": "text_completion", "created": 1700000000, "model": "tiny",
              "choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5, "prompt_tokens_details": null}})"));
}

TEST(OpenAiResponse, ChatCompletion) {
  ChatChoice c;
  c.content = "Hi!";
  c.finish_reason = "stop";
  c.logprobs = std::vector<TokenLogprob>{{"Hi", -0.25, {{"Hi", -0.25}, {"Yo", -2.0}}}, {"!", -0.5, {}}};
  ResponseMeta meta{"chatcmpl-9", 1700000001, "tiny"};
  json want = json::parse(R"({"id": "chatcmpl-9", "object": "chat.completion", "created": 1700000001, "model": "tiny",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi!", "tool_calls": []},
      "logprobs": {"content": [
        {"token": "Hi", "logprob": -0.25, "bytes": [72, 105],
         "top_logprobs": [{"token": "Hi", "logprob": -0.25, "bytes": [72, 105]}, {"token": "Yo", "logprob": -2.0, "bytes": [89, 111]}]},
        {"token": "!", "logprob": -0.5, "bytes": [33], "top_logprobs": []}]},
      "finish_reason": "stop", "stop_reason": null}],
    "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6, "prompt_tokens_details": null}})");
  EXPECT_EQ(ChatCompletionResponse(meta, {c}, Usage{4, 2, std::nullopt}), want);
}

TEST(OpenAiResponse, ChatStreamChunks) {
  ResponseMeta meta{"chatcmpl-9", 1700000001, "tiny"};
  const std::string head = R"("id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1700000001, "model": "tiny")";
  EXPECT_EQ(ChatRoleChunk(meta, 1), json::parse("{" + head + R"(, "choices": [{"index": 1,
      "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]})"));
  ChatChoice delta;
  delta.content = "Hel";
  EXPECT_EQ(ChatContentChunk(meta, delta), json::parse("{" + head + R"(, "choices": [{"index": 0,
      "delta": {"content": "Hel"}, "logprobs": null, "finish_reason": null}]})"));
  ChatChoice last;
  last.finish_reason = "length";
  EXPECT_EQ(ChatContentChunk(meta, last), json::parse("{" + head + R"(, "choices": [{"index": 0,
      "delta": {}, "logprobs": null, "finish_reason": "length", "stop_reason": null}]})"));
  EXPECT_EQ(ChatUsageChunk(meta, Usage{3, 4, std::nullopt}), json::parse("{" + head + R"(, "choices": [],
      "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7, "prompt_tokens_details": null}})"));
  // continuous_usage_stats: usage on every chunk.
  EXPECT_EQ(ChatContentChunk(meta, delta, Usage{3, 1, std::nullopt})["usage"]["total_tokens"], 4);
}

TEST(OpenAiResponse, DumpReplacesInvalidUtf8) {
  CompletionChoice c;
  c.text = "a\xff";
  EXPECT_EQ(json::parse(Dump(CompletionChunk(kMeta, c)))["choices"][0]["text"], "a\xef\xbf\xbd");
}

TEST(OpenAiResponse, ModelsVersionTokenize) {
  EXPECT_EQ(ModelList({"tiny", "alias"}, "/models/tiny", 2048, 1700000000), json::parse(R"({"object": "list", "data": [
      {"id": "tiny", "object": "model", "created": 1700000000, "owned_by": "llmserve", "root": "/models/tiny", "parent": null, "max_model_len": 2048},
      {"id": "alias", "object": "model", "created": 1700000000, "owned_by": "llmserve", "root": "/models/tiny", "parent": null, "max_model_len": 2048}]})"));
  EXPECT_EQ(VersionBody("0.1.0"), json::parse(R"({"version": "0.1.0"})"));
  EXPECT_EQ(TokenizeResponse({1, 2, 3}, 2048, std::nullopt),
            json::parse(R"({"count": 3, "max_model_len": 2048, "tokens": [1, 2, 3], "token_strs": null})"));
  EXPECT_EQ(TokenizeResponse({1}, 8, std::vector<std::string>{"hi"}),
            json::parse(R"({"count": 1, "max_model_len": 8, "tokens": [1], "token_strs": ["hi"]})"));
  EXPECT_EQ(DetokenizeResponse("hello"), json::parse(R"({"prompt": "hello"})"));
}

}  // namespace
}  // namespace llmserve::frontend::openai
