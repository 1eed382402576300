// StreamWriter over a real server: the SSE events a client reads back, for
// chat and completions, with and without usage, and an error mid-stream.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "frontend/http/http_server.h"
#include "frontend/openai/stream_writer.h"
#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;
using testing::ClientResponse;
using testing::TestClient;

// Runs `produce` on its own thread (as the engine client's output thread would)
// to answer one POST /stream; returns what the client read.
ClientResponse Stream(std::function<void(std::shared_ptr<http::ResponseWriter>)> produce) {
  std::thread producer;
  http::Router router;
  router.Add("POST", "/stream", [&](http::HttpRequest, std::shared_ptr<http::ResponseWriter> w) {
    producer = std::thread([produce, w] { produce(w); });
  });
  auto server = http::HttpServer::Start(http::HttpServerConfig{}, std::move(router));
  EXPECT_TRUE(server.ok());
  TestClient client;
  EXPECT_TRUE(client.Connect((*server)->port()));
  EXPECT_TRUE(client.SendRequest("POST", "/stream", "{}"));
  ClientResponse r = client.ReadResponse();
  if (producer.joinable()) producer.join();
  return r;
}

// The payloads of the SSE events in `body`, JSON-parsed except [DONE].
std::vector<json> Events(const std::string& body) {
  std::vector<json> events;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "unterminated event";
    if (end == std::string::npos) break;
    std::string event = body.substr(pos, end - pos);
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    std::string payload = event.substr(6);
    events.push_back(payload == "[DONE]" ? json("[DONE]") : json::parse(payload));
    pos = end + 2;
  }
  return events;
}

const ResponseMeta kChatMeta{"chatcmpl-7", 1700000000, "tiny"};

TEST(OpenAiStream, ChatWithUsage) {
  StreamWriter::Options options;
  options.api = StreamWriter::Api::kChat;
  options.num_choices = 2;
  options.prompt_tokens = 6;
  options.include_usage = true;
  ClientResponse r = Stream([&](std::shared_ptr<http::ResponseWriter> w) {
    StreamWriter s(options, kChatMeta, w);
    s.Begin({{"X-Request-Id", "7"}});
    s.Delta(0, "Hel", 1);
    s.Delta(1, "", 1);  // an incomplete character: nothing to send yet
    s.Delta(1, "Yo", 1);
    s.Finish(0, "lo", 1, "length");
    s.Finish(1, "", 1, "stop", 2);
    s.Done();
  });
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(r.header("x-request-id"), "7");
  std::vector<json> events = Events(r.body);
  const std::string head = R"("id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1700000000, "model": "tiny")";
  auto chunk = [&](const std::string& choice) { return json::parse("{" + head + R"(, "choices": [)" + choice + "]}"); };
  std::vector<json> want = {
      chunk(R"({"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null})"),
      chunk(R"({"index": 1, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null})"),
      chunk(R"({"index": 0, "delta": {"content": "Hel"}, "logprobs": null, "finish_reason": null})"),
      chunk(R"({"index": 1, "delta": {"content": "Yo"}, "logprobs": null, "finish_reason": null})"),
      chunk(R"({"index": 0, "delta": {"content": "lo"}, "logprobs": null, "finish_reason": "length", "stop_reason": null})"),
      chunk(R"({"index": 1, "delta": {}, "logprobs": null, "finish_reason": "stop", "stop_reason": 2})"),
      json::parse("{" + head + R"(, "choices": [], "usage": {"prompt_tokens": 6, "completion_tokens": 5, "total_tokens": 11, "prompt_tokens_details": null}})"),
      json("[DONE]")};
  EXPECT_EQ(events, want);
}

TEST(OpenAiStream, CompletionWithoutUsageTracksTextOffsets) {
  StreamWriter::Options options;
  options.prompt_tokens = 3;
  ClientResponse r = Stream([&](std::shared_ptr<http::ResponseWriter> w) {
    StreamWriter s(options, ResponseMeta{"cmpl-1", 5, "tiny"}, w);
    s.Begin();
    s.Delta(0, "ab", 1, std::vector<TokenLogprob>{{"ab", -0.5, {}}});
    s.Finish(0, "c", 1, "stop", std::string("\n"), std::vector<TokenLogprob>{{"c", -1.0, {}}});
    s.Done();
  });
  ASSERT_EQ(r.status, 200);
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0], json::parse(R"({"id": "cmpl-1", "object": "text_completion", "created": 5, "model": "tiny",
      "choices": [{"index": 0, "text": "ab", "finish_reason": null, "stop_reason": null,
        "logprobs": {"tokens": ["ab"], "token_logprobs": [-0.5], "top_logprobs": [{}], "text_offset": [0]}}]})"));
  EXPECT_EQ(events[1]["choices"][0]["logprobs"]["text_offset"], json::parse("[2]"));
  EXPECT_EQ(events[1]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(events[1]["choices"][0]["stop_reason"], "\n");
  EXPECT_EQ(events[2], json("[DONE]"));
}

TEST(OpenAiStream, ContinuousUsageOnEveryChunk) {
  StreamWriter::Options options;
  options.prompt_tokens = 2;
  options.include_usage = true;
  options.continuous_usage_stats = true;
  ClientResponse r = Stream([&](std::shared_ptr<http::ResponseWriter> w) {
    StreamWriter s(options, ResponseMeta{"cmpl-2", 5, "tiny"}, w);
    s.Begin();
    s.Delta(0, "a", 1);
    s.Finish(0, "b", 1, "length");
    s.Done(1);
  });
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["usage"]["completion_tokens"], 1);
  EXPECT_EQ(events[1]["usage"]["completion_tokens"], 2);
  EXPECT_EQ(events[2]["choices"], json::array());
  EXPECT_EQ(events[2]["usage"], json::parse(R"({"prompt_tokens": 2, "completion_tokens": 2, "total_tokens": 4,
      "prompt_tokens_details": {"cached_tokens": 1}})"));
}

TEST(OpenAiStream, ErrorMidStreamAndBeforeTheHeader) {
  ClientResponse r = Stream([&](std::shared_ptr<http::ResponseWriter> w) {
    StreamWriter s(StreamWriter::Options{}, ResponseMeta{"cmpl-3", 5, "tiny"}, w);
    s.Begin();
    s.Delta(0, "a", 1);
    s.Fail(MakeError(503, "The engine died."));
    s.Delta(0, "ignored", 1);
  });
  std::vector<json> events = Events(r.body);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1], json::parse(R"({"error": {"message": "The engine died.", "type": "ServiceUnavailableError", "param": null, "code": 503}})"));
  EXPECT_EQ(events[2], json("[DONE]"));

  r = Stream([&](std::shared_ptr<http::ResponseWriter> w) {
    StreamWriter s(StreamWriter::Options{}, ResponseMeta{"cmpl-4", 5, "tiny"}, w);
    s.Fail(MakeError(429, "The waiting queue is full."));
  });
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "RateLimitError");
}

}  // namespace
}  // namespace llmserve::frontend::openai
