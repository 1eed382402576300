// SSE parsing, stream timing and argument parsing of `llmserve bench serve`.
#include <gtest/gtest.h>

#include "deploy/bench/bench_args.h"
#include "deploy/bench/load_runner.h"
#include "deploy/bench/serve_options.h"
#include "deploy/bench/sse_parser.h"
#include "deploy/bench/stream_accumulator.h"

namespace llmserve::deploy::bench {
namespace {

TEST(BenchSse, EventsSplitAnywhereComeOutWhole) {
  const std::string stream =
      ": ping\n\ndata: {\"a\":1}\n\ndata: line1\r\ndata: line2\r\n\r\nevent: x\nid: 3\n\ndata: [DONE]\n\n";
  for (size_t cut = 1; cut < stream.size(); cut += 3) {
    SseParser p;
    auto events = p.Feed(stream.substr(0, cut));
    for (auto& e : p.Feed(stream.substr(cut))) events.push_back(e);
    ASSERT_EQ(events.size(), 3u) << cut;
    EXPECT_EQ(events[0], "{\"a\":1}");
    EXPECT_EQ(events[1], "line1\nline2");
    EXPECT_EQ(events[2], "[DONE]");
  }
  SseParser open;
  EXPECT_TRUE(open.Feed("data: tail").empty());
  EXPECT_EQ(open.Finish(), "tail");
}

TEST(BenchStream, CompletionChunksTimeTokensAndUsageGivesCounts) {
  RequestOutput o;
  StreamAccumulator acc(ApiKind::kCompletions, 10.0, &o);
  acc.OnEvent(R"({"choices":[{"index":0,"text":"Hel"}]})", 10.5);
  acc.OnEvent(R"({"choices":[{"index":0,"text":"lo"}]})", 10.7);
  acc.OnEvent(R"({"choices":[{"index":0,"text":"!","finish_reason":"length"}]})", 11.0);
  acc.OnEvent(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4}})", 11.2);
  acc.OnEvent("[DONE]", 11.3);
  acc.Finish();
  EXPECT_TRUE(o.success);
  EXPECT_DOUBLE_EQ(o.ttft, 0.5);
  ASSERT_EQ(o.itl.size(), 2u);
  EXPECT_NEAR(o.itl[0], 0.2, 1e-12);
  EXPECT_NEAR(o.itl[1], 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(o.latency, 1.0);  // the usage chunk carries no token
  EXPECT_EQ(o.generated_text, "Hello!");
  EXPECT_TRUE(o.usage_reported);
  EXPECT_EQ(o.output_tokens, 4);
  EXPECT_EQ(o.prompt_len, 12);
}

TEST(BenchStream, ChatRoleChunkIsNotATokenAndErrorsFail) {
  RequestOutput o;
  StreamAccumulator acc(ApiKind::kChat, 0.0, &o);
  acc.OnEvent(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})", 0.1);
  acc.OnEvent(R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})", 0.4);
  acc.Finish();
  EXPECT_TRUE(o.success);
  EXPECT_DOUBLE_EQ(o.ttft, 0.4);
  EXPECT_FALSE(o.usage_reported);

  RequestOutput e;
  StreamAccumulator err(ApiKind::kCompletions, 0.0, &e);
  err.OnEvent(R"({"choices":[{"text":"a"}]})", 0.1);
  err.OnEvent(R"({"error":{"message":"boom"}})", 0.2);
  err.Finish();
  EXPECT_FALSE(e.success);
  EXPECT_NE(e.error.find("boom"), std::string::npos);

  RequestOutput none;
  StreamAccumulator empty(ApiKind::kCompletions, 0.0, &none);
  empty.OnEvent("[DONE]", 0.1);
  empty.Finish();
  EXPECT_FALSE(none.success);
}

TEST(BenchArgs, VllmCommandLineParses) {
  std::vector<std::string> argv = {"bench serve", "--backend", "vllm", "--base-url", "http://h:9/x/",
                                   "--model=m", "--dataset_name", "random", "--random-input-len", "64",
                                   "--request-rate", "2.5", "--goodput", "ttft:100", "tpot:20",
                                   "--ignore-eos", "--metric-percentiles", "50,99", "--max-concurrency", "4",
                                   "--temperature", "0"};
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(s.data());
  ArgParser p("usage", ServeBenchArgSpecs());
  ASSERT_TRUE(p.Parse(static_cast<int>(a.size()), a.data()).ok());
  auto o = ServeBenchOptionsFromArgs(p);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->endpoint, "/v1/completions");
  EXPECT_EQ(o->random.input_len, 64);
  EXPECT_EQ(o->random.output_len, 128);
  EXPECT_DOUBLE_EQ(o->request_rate, 2.5);
  EXPECT_DOUBLE_EQ(*o->goodput.ttft_ms, 100);
  EXPECT_DOUBLE_EQ(*o->goodput.tpot_ms, 20);
  EXPECT_TRUE(o->ignore_eos);
  EXPECT_EQ(o->max_concurrency, 4u);
  EXPECT_EQ(o->metric_percentiles, (std::vector<double>{50, 99}));
  ASSERT_EQ(o->sampling.size(), 1u);
  EXPECT_EQ(o->sampling[0].first, "temperature");
  auto e = ParseBaseUrl(o->base_url);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "h");
  EXPECT_EQ(e->port, "9");
  EXPECT_EQ(e->base_path, "/x");
}

TEST(BenchArgs, BadInputIsAClearError) {
  auto parse = [](std::vector<std::string> argv) -> Status {
    argv.insert(argv.begin(), "bench serve");
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    ArgParser p("usage", ServeBenchArgSpecs());
    LLMSERVE_RETURN_IF_ERROR(p.Parse(static_cast<int>(a.size()), a.data()));
    return ServeBenchOptionsFromArgs(p).status();
  };
  EXPECT_TRUE(parse({}).ok());
  EXPECT_NE(parse({"--frobnicate"}).message().find("unknown flag --frobnicate"), std::string::npos);
  EXPECT_FALSE(parse({"--num-prompts"}).ok());
  EXPECT_FALSE(parse({"--num-prompts", "many"}).ok());
  EXPECT_FALSE(parse({"--request-rate", "0"}).ok());
  EXPECT_FALSE(parse({"--dataset-name", "sonnet"}).ok());
  EXPECT_FALSE(parse({"--dataset-name", "sharegpt"}).ok());  // needs --dataset-path
  EXPECT_FALSE(parse({"--percentile-metrics", "ttft,foo"}).ok());
  EXPECT_FALSE(parse({"--goodput", "ttft"}).ok());
  EXPECT_FALSE(parse({"--max-concurrency", "0"}).ok());
  EXPECT_FALSE(parse({"--extra-body", "[1]"}).ok());
  EXPECT_FALSE(ParseBaseUrl("https://x").ok());
  EXPECT_FALSE(ParseBaseUrl("ftp://x").ok());
  EXPECT_FALSE(ParseBaseUrl("http://:80").ok());
}

}  // namespace
}  // namespace llmserve::deploy::bench
