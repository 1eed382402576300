// Conversion of validated OpenAI requests into the engine's SamplingParams.
#include <gtest/gtest.h>

#include "frontend/openai/chat_request.h"
#include "frontend/openai/completion_request.h"
#include "frontend/openai/engine_request.h"
#include "frontend/openai/sampling_request.h"

namespace llmserve::frontend::openai {
namespace {

SamplingContext Context(int32_t prompt_tokens, int32_t max_model_len) {
  SamplingContext c;
  c.prompt_tokens = prompt_tokens;
  c.max_model_len = max_model_len;
  c.eos_token_ids = {2};
  return c;
}

proto::SamplingParams Convert(const SamplingRequest& r, const SamplingContext& c) {
  proto::SamplingParams p;
  MaybeError e = ToSamplingParams(r, c, &p);
  EXPECT_FALSE(e.has_value()) << e->message;
  return p;
}

TEST(OpenAiSampling, EveryFieldIsCarried) {
  CompletionRequest req;
  ASSERT_FALSE(ParseCompletionRequest(R"({
    "prompt": "p", "n": 2, "max_tokens": 50, "temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
    "seed": -7, "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.2,
    "stop": ["\n", "END"], "stop_token_ids": [7, 2], "logprobs": 3, "ignore_eos": true, "min_tokens": 4,
    "skip_special_tokens": false, "spaces_between_special_tokens": false, "include_stop_str_in_output": true,
    "logit_bias": {"11": -1.5}, "allowed_token_ids": [5, 6]})", ParseOptions{}, &req));
  proto::SamplingParams p = Convert(req.sampling, Context(10, 100));
  proto::SamplingParams want;
  want.n = 2;
  want.max_tokens = 50;
  want.temperature = 0.7;
  want.top_p = 0.9;
  want.top_k = 40;
  want.min_p = 0.05;
  want.seed = -7;
  want.presence_penalty = 0.5;
  want.frequency_penalty = -0.5;
  want.repetition_penalty = 1.2;
  want.stop = {"\n", "END"};
  want.stop_token_ids = {7, 2};
  want.logprobs = 3;
  want.ignore_eos = true;
  want.min_tokens = 4;
  want.skip_special_tokens = false;
  want.spaces_between_special_tokens = false;
  want.include_stop_str_in_output = true;
  want.logit_bias = {{11, -1.5}};
  want.allowed_token_ids = {5, 6};
  want.all_stop_token_ids = {7, 2};  // EOS 2 is already a stop id
  want.output_kind = proto::OutputKind::kFinalOnly;
  EXPECT_EQ(p, want);
}

TEST(OpenAiSampling, DefaultsStreamingAndGreedy) {
  SamplingRequest r;  // nothing set
  proto::SamplingParams p = Convert(r, Context(10, 100));
  EXPECT_EQ(p.temperature, 1.0);
  EXPECT_EQ(p.top_p, 1.0);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_EQ(p.max_tokens, 90);  // unset: the rest of the context
  EXPECT_EQ(p.all_stop_token_ids, (std::vector<int32_t>{2}));
  EXPECT_EQ(p.output_kind, proto::OutputKind::kFinalOnly);

  r.stream = true;
  r.top_k = -1;
  EXPECT_EQ(Convert(r, Context(10, 100)).output_kind, proto::OutputKind::kDelta);
  EXPECT_EQ(Convert(r, Context(10, 100)).top_k, 0);

  // The model's generation_config defaults fill unset fields only.
  SamplingContext c = Context(10, 100);
  c.defaults.temperature = 0.6;
  c.defaults.top_p = 0.95;
  c.defaults.top_k = 20;
  c.defaults.repetition_penalty = 1.05;
  c.defaults.max_tokens = 32;
  r = SamplingRequest{};
  r.top_p = 0.5;
  p = Convert(r, c);
  EXPECT_EQ(p.temperature, 0.6);
  EXPECT_EQ(p.top_p, 0.5);
  EXPECT_EQ(p.top_k, 20);
  EXPECT_EQ(p.repetition_penalty, 1.05);
  EXPECT_EQ(p.max_tokens, 32);

  // Temperature ~0 is greedy: the truncation knobs are reset, as in vLLM.
  r = SamplingRequest{};
  r.temperature = 0.0;
  r.top_p = 0.5;
  r.top_k = 5;
  r.min_p = 0.2;
  p = Convert(r, Context(10, 100));
  EXPECT_EQ(p.temperature, 0.0);
  EXPECT_EQ(p.top_p, 1.0);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_EQ(p.min_p, 0.0);
}

TEST(OpenAiSampling, ChatLogprobsBecomeTopN) {
  ChatCompletionRequest req;
  ASSERT_FALSE(ParseChatCompletionRequest(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true,
      "top_logprobs": 4, "max_completion_tokens": 8, "stream": true})", ParseOptions{}, &req));
  proto::SamplingParams p = Convert(req.sampling, Context(5, 64));
  EXPECT_EQ(p.logprobs, 4);
  EXPECT_EQ(p.max_tokens, 8);
  EXPECT_EQ(p.output_kind, proto::OutputKind::kDelta);
}

TEST(OpenAiSampling, ContextLengthIsEnforced) {
  SamplingRequest r;
  r.max_tokens = 91;
  proto::SamplingParams p;
  MaybeError e = ToSamplingParams(r, Context(10, 100), &p);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, BadRequest("This model's maximum context length is 100 tokens. However, you requested 101 tokens "
                           "(10 in the prompt, 91 in the completion). Please reduce the length of the prompt or completion.",
                           "max_tokens"));
  r.max_tokens = 90;
  EXPECT_FALSE(ToSamplingParams(r, Context(10, 100), &p).has_value());
  EXPECT_EQ(p.max_tokens, 90);

  e = ToSamplingParams(SamplingRequest{}, Context(100, 100), &p);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, BadRequest("This model's maximum context length is 100 tokens. However, your prompt has 100 tokens, "
                           "which leaves no room for output. Please reduce the length of the prompt."));
}

}  // namespace
}  // namespace llmserve::frontend::openai

namespace llmserve::frontend::openai {
namespace {

TEST(OpenAiEngineRequest, CarriesIdsPromptAndRouting) {
  SamplingRequest s;
  s.max_tokens = 5;
  s.priority = -2;
  s.cache_salt = "tenant-a";
  http::HttpRequest http_request;
  http_request.headers = {{"X-data-parallel-rank", "3"}};
  EngineRequestInputs in;
  in.request_id = "cmpl-abc-0";
  in.prompt_token_ids = {1, 2, 3, 4};
  in.prompt_is_token_ids = true;
  in.arrival_time = 1700000000.5;
  in.client_index = 1;
  proto::EngineCoreRequest req;
  ASSERT_FALSE(BuildEngineRequest(http_request, s, Context(0, 16), in, &req).has_value());
  EXPECT_EQ(req.request_id, "cmpl-abc-0");
  EXPECT_EQ(req.prompt_token_ids, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_TRUE(req.prompt_is_token_ids);
  EXPECT_EQ(req.arrival_time, 1700000000.5);
  EXPECT_EQ(req.client_index, 1);
  EXPECT_EQ(req.data_parallel_rank, 3);
  EXPECT_EQ(req.cache_salt, "tenant-a");
  EXPECT_EQ(req.priority, -2);
  EXPECT_EQ(req.sampling_params.max_tokens, 5);

  // The prompt length comes from the ids, so the context check sees it.
  in.prompt_token_ids.assign(12, 7);
  MaybeError e = BuildEngineRequest(http::HttpRequest{}, s, Context(0, 16), in, &req);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "max_tokens");

  http_request.headers = {{"x-data-parallel-rank", "-1"}};
  e = BuildEngineRequest(http_request, s, Context(0, 100), in, &req);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, BadRequest("X-data-parallel-rank must be a non-negative integer, got '-1'"));
}

}  // namespace
}  // namespace llmserve::frontend::openai
