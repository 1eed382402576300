// The request log's lines (vLLM's --enable-log-requests / --enable-log-outputs)
// and the X-Request-Id a response carries (--enable-request-id-headers).
#include "frontend/serving/request_log.h"

#include <gtest/gtest.h>

#include "frontend/http/request_id.h"

namespace llmserve::frontend::serving {
namespace {

TEST(RequestLog, ReceivedLineNamesPromptParamsAndIds) {
  proto::SamplingParams p;
  p.temperature = 0.5;
  p.max_tokens = 7;
  p.seed = 3;
  p.stop = {"\n"};
  const std::string line = ReceivedRequestLine({}, "cmpl-1-0", std::string("Say \"hi\""), p, {1, 2, 3});
  EXPECT_EQ(line.rfind("Received request cmpl-1-0: prompt: \"Say \\\"hi\\\"\", params: SamplingParams(n=1, ", 0), 0u)
      << line;
  EXPECT_NE(line.find("temperature=0.5, "), std::string::npos) << line;
  EXPECT_NE(line.find("seed=3, stop=[\"\\n\"], "), std::string::npos) << line;
  EXPECT_NE(line.find("max_tokens=7, "), std::string::npos) << line;
  EXPECT_NE(line.find("logprobs=None, "), std::string::npos) << line;
  EXPECT_TRUE(line.ends_with(", prompt_token_ids: [1, 2, 3].")) << line;
}

TEST(RequestLog, MaxLogLenCutsTextAndIds) {
  RequestLogOptions o;
  o.max_log_len = 3;
  const std::string in = ReceivedRequestLine(o, "r", std::string("abcdef"), {}, {9, 8, 7, 6});
  EXPECT_NE(in.find("prompt: \"abc\", "), std::string::npos) << in;
  EXPECT_TRUE(in.ends_with("prompt_token_ids: [9, 8, 7].")) << in;
  EXPECT_NE(ReceivedRequestLine(o, "r", std::nullopt, {}, {}).find("prompt: None, "), std::string::npos);
  EXPECT_EQ(GeneratedResponseLine(o, "r", "hello", {5, 6, 7, 8}, "length"),
            "Generated response r: output: \"hel\", output_token_ids: [5, 6, 7], finish_reason: length");
}

TEST(RequestLog, ACutInsideAUtf8CharacterStillLogs) {
  RequestLogOptions o;
  o.max_log_len = 1;
  const std::string line = GeneratedResponseLine(o, "r", "\xc3\xa9t\xc3\xa9", {}, "stop");
  EXPECT_NE(line.find("output: \"\xef\xbf\xbd\""), std::string::npos) << line;  // U+FFFD for the half character
}

TEST(RequestIdHeader, EchoesTheClientsIdElseARandomOne) {
  http::HttpRequest with;
  with.headers = {{"X-Request-Id", "abc-123"}};
  EXPECT_EQ(http::ResponseRequestId(with), "abc-123");
  const http::HttpRequest without;
  const std::string a = http::ResponseRequestId(without), b = http::ResponseRequestId(without);
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace llmserve::frontend::serving
