// The OpenAI protocol layer's request parsing: every bad-input class gets the
// exact status and error body vLLM would send; good inputs parse to the
// expected fields.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/openai/chat_request.h"
#include "frontend/openai/completion_request.h"
#include "frontend/openai/request_body.h"
#include "frontend/openai/server_info.h"
#include "frontend/openai/tokenize_request.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;

// The error a completion body produces (fails the test if it parses).
ApiError CompletionError(const std::string& body) {
  CompletionRequest req;
  MaybeError e = ParseCompletionRequest(body, ParseOptions{}, &req);
  EXPECT_TRUE(e.has_value()) << "parsed: " << body;
  return e.value_or(ApiError{});
}

ApiError ChatError(const std::string& body) {
  ChatCompletionRequest req;
  MaybeError e = ParseChatCompletionRequest(body, ParseOptions{}, &req);
  EXPECT_TRUE(e.has_value()) << "parsed: " << body;
  return e.value_or(ApiError{});
}

CompletionRequest Completion(const std::string& body) {
  CompletionRequest req;
  MaybeError e = ParseCompletionRequest(body, ParseOptions{}, &req);
  EXPECT_FALSE(e.has_value()) << e->message;
  return req;
}

ChatCompletionRequest Chat(const std::string& body) {
  ChatCompletionRequest req;
  MaybeError e = ParseChatCompletionRequest(body, ParseOptions{}, &req);
  EXPECT_FALSE(e.has_value()) << e->message;
  return req;
}

TEST(OpenAiErrors, BodyShapeMatchesVllm) {
  ApiError e = BadRequest("temperature must be non-negative, got -1.0.", "temperature");
  EXPECT_EQ(json::parse(ErrorBody(e)), json::parse(R"({"error": {"message": "temperature must be non-negative, got -1.0.",
      "type": "BadRequestError", "param": "temperature", "code": 400}})"));
  EXPECT_EQ(json::parse(ErrorBody(ModelNotFound("gpt-x"))), json::parse(R"({"error": {"message": "The model `gpt-x` does not exist.",
      "type": "NotFoundError", "param": "model", "code": 404}})"));
  http::HttpResponse r = RouterErrorResponse(413, "too big");
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"error": {"message": "too big", "type": "RequestTooLargeError", "param": null, "code": 413}})"));
}

TEST(OpenAiErrors, StatusMapping) {
  EXPECT_EQ(FromStatus(Status::ResourceExhausted("queue full")), (ApiError{429, "queue full", "RateLimitError", std::nullopt}));
  EXPECT_EQ(FromStatus(Status::Unavailable("engine dead")), (ApiError{503, "engine dead", "ServiceUnavailableError", std::nullopt}));
  EXPECT_EQ(FromStatus(Status::InvalidArgument("x")).status, 400);
  EXPECT_EQ(FromStatus(Status::NotFound("x")).status, 404);
  EXPECT_EQ(FromStatus(Status::Unimplemented("x")).status, 501);
  EXPECT_EQ(FromStatus(Status::Internal("x")), (ApiError{500, "x", "InternalServerError", std::nullopt}));
}

TEST(OpenAiBody, InvalidUtf8InvalidJsonAndNonObjects) {
  EXPECT_EQ(CompletionError("{\"prompt\": \"\xff\xfe\"}"), BadRequest("The request body is not valid UTF-8."));
  EXPECT_EQ(CompletionError("{\"prompt\": \"\xed\xa0\x80\"}").message, "The request body is not valid UTF-8.");  // surrogate
  EXPECT_EQ(CompletionError("{\"prompt\": \"\xc0\xaf\"}").message, "The request body is not valid UTF-8.");      // overlong
  EXPECT_EQ(CompletionError(""), BadRequest("The request body is empty; expected a JSON object."));
  ApiError bad_json = CompletionError("{\"prompt\": ");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(bad_json.type, "BadRequestError");
  EXPECT_EQ(bad_json.message.rfind("Invalid JSON in the request body: ", 0), 0u) << bad_json.message;
  EXPECT_EQ(CompletionError("[1, 2]"), BadRequest("The request body must be a JSON object, got array."));
  // A number too large for a double (found by fuzz.openai_request: it threw past the parser).
  for (const char* body : {"{\"max_tokens\": 1e999}", "999e99999999999999999999999"}) {
    ApiError overflow = CompletionError(body);
    EXPECT_EQ(overflow.status, 400);
    EXPECT_EQ(overflow.message.rfind("Invalid JSON in the request body: ", 0), 0u) << overflow.message;
  }
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9llo \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
}

TEST(OpenAiCompletion, PromptForms) {
  CompletionRequest r = Completion(R"({"model": "m", "prompt": "hello"})");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(r.prompts[0].text, "hello");
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.sampling.max_tokens, 16);  // OpenAI / vLLM default for completions

  r = Completion(R"({"prompt": ["a", "b"]})");
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[1].text, "b");
  EXPECT_FALSE(r.model.has_value());

  r = Completion(R"({"prompt": [1, 2, 3]})");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(r.prompts[0].token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_FALSE(r.prompts[0].text.has_value());

  r = Completion(R"({"prompt": [[1, 2], [3.0]], "max_tokens": null})");
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[1].token_ids, (std::vector<int32_t>{3}));
  EXPECT_FALSE(r.sampling.max_tokens.has_value());
}

TEST(OpenAiCompletion, BadPrompts) {
  EXPECT_EQ(CompletionError(R"({"model": "m"})"), BadRequest("'prompt' is required", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": ""})"), BadRequest("'prompt' must not be empty", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": []})"), BadRequest("'prompt' must not be empty", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": [[]]})"), BadRequest("'prompt'[0] must not be empty", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": ["a", ""]})"), BadRequest("'prompt'[1] must not be empty", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": 5})"),
            BadRequest("'prompt' must be a string, an array of strings, an array of token ids or an array of arrays of token ids, got integer", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": [1, -2]})"), BadRequest("'prompt'[1] must be at least 0, got -2", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": [1, 2.5]})"), BadRequest("'prompt'[1] must be an integer, got 2.5", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": [1, "a"]})"), BadRequest("'prompt'[1] must be an integer, got string", "prompt"));
  EXPECT_EQ(CompletionError(R"({"prompt": [{"a": 1}]})").param, "prompt");
}

TEST(OpenAiCompletion, WrongTypes) {
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "model": 3})"), BadRequest("'model' must be a string, got integer", "model"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "temperature": "0.5"})"), BadRequest("'temperature' must be a number, got string", "temperature"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stream": "true"})"), BadRequest("'stream' must be a boolean, got string", "stream"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "max_tokens": "5"})"), BadRequest("'max_tokens' must be an integer, got string", "max_tokens"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "n": 1.5})"), BadRequest("'n' must be an integer, got 1.5", "n"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logprobs": true})"), BadRequest("'logprobs' must be an integer, got boolean", "logprobs"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stop": 1})"), BadRequest("'stop' must be a string or an array of strings, got integer", "stop"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stop": ["a", 1]})"),
            BadRequest("'stop' must be a string or an array of strings, got an array containing integer", "stop"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "seed": "1"})"), BadRequest("'seed' must be an integer, got string", "seed"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": 1}})"),
            BadRequest("'stream_options.include_usage' must be a boolean, got integer", "stream_options"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stream_options": []})"), BadRequest("'stream_options' must be an object, got array", "stream_options"));
}

TEST(OpenAiCompletion, OutOfRangeValues) {
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "temperature": -0.1})"), BadRequest("temperature must be non-negative, got -0.1.", "temperature"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "top_p": 0})"), BadRequest("top_p must be in (0, 1], got 0.0.", "top_p"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "top_p": 1.5})"), BadRequest("top_p must be in (0, 1], got 1.5.", "top_p"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "top_k": -2})"), BadRequest("top_k must be -1 or 0 (disable), or at least 1, got -2.", "top_k"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "min_p": 1.5})"), BadRequest("min_p must be in [0, 1], got 1.5.", "min_p"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "presence_penalty": 2.5})"), BadRequest("presence_penalty must be in [-2, 2], got 2.5.", "presence_penalty"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "frequency_penalty": -3})"), BadRequest("frequency_penalty must be in [-2, 2], got -3.0.", "frequency_penalty"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "repetition_penalty": 0})"), BadRequest("repetition_penalty must be greater than zero, got 0.0.", "repetition_penalty"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "n": 0})"), BadRequest("'n' must be at least 1, got 0", "n"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "n": 129})"), BadRequest("'n' must be at most 128, got 129", "n"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "max_tokens": 0})"), BadRequest("'max_tokens' must be at least 1, got 0", "max_tokens"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "max_tokens": 3000000000})"), BadRequest("'max_tokens' must be at most 2147483647, got 3000000000", "max_tokens"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logprobs": 21})"), BadRequest("'logprobs' must be at most 20, got 21", "logprobs"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "min_tokens": -1})"), BadRequest("'min_tokens' must be at least 0, got -1", "min_tokens"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "max_tokens": 4, "min_tokens": 5})"),
            BadRequest("min_tokens must be less than or equal to max_tokens=4, got 5.", "min_tokens"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stop_token_ids": [-1]})"), BadRequest("'stop_token_ids[0]' must be at least 0, got -1", "stop_token_ids"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stop": [""]})"), BadRequest("'stop' must not contain empty strings", "stop"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "cache_salt": ""})"),
            BadRequest("Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt"));
}

TEST(OpenAiCompletion, LogitBiasKeysAreStrings) {
  CompletionRequest r = Completion(R"({"prompt": "x", "logit_bias": {"5": 2.5, "7": -500, "9": 1000}})");
  EXPECT_EQ(r.sampling.logit_bias, (std::map<int32_t, double>{{5, 2.5}, {7, -100.0}, {9, 100.0}}));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logit_bias": {"abc": 1}})"),
            BadRequest("'logit_bias' keys must be token ids (non-negative integers written as strings), got \"abc\"", "logit_bias"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logit_bias": {"-3": 1}})").param, "logit_bias");
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logit_bias": {"99999999999": 1}})").param, "logit_bias");
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logit_bias": {"3": "a"}})"),
            BadRequest("'logit_bias' values must be numbers, got string for token 3", "logit_bias"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "logit_bias": [1]})"),
            BadRequest("'logit_bias' must be an object mapping token ids to biases, got array", "logit_bias"));
}

TEST(OpenAiCompletion, UnsupportedFeaturesAreRejectedClearly) {
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "suffix": "y"})"), BadRequest("'suffix' is not currently supported.", "suffix"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "best_of": 3})"), BadRequest("'best_of' is not supported; leave it unset or equal to n.", "best_of"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stream_options": {"include_usage": true}})"),
            BadRequest("Stream options can only be defined when `stream=True`.", "stream_options"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "stream": true, "prompt_logprobs": 1})"),
            BadRequest("prompt_logprobs is not compatible with streaming.", "prompt_logprobs"));
  // echo=false, best_of == n and an empty suffix are fine.
  Completion(R"({"prompt": "x", "echo": false, "best_of": 1, "suffix": ""})");
}

TEST(OpenAiCompletion, EchoAndPromptLogprobs) {
  CompletionRequest r = Completion(R"({"prompt": "x", "echo": true, "max_tokens": 0, "logprobs": 2})");
  EXPECT_TRUE(r.sampling.echo);
  EXPECT_TRUE(r.sampling.echo_prompt_logprobs);
  EXPECT_EQ(r.sampling.max_tokens, 0);
  EXPECT_EQ(Completion(R"({"prompt": "x", "prompt_logprobs": 0})").sampling.prompt_logprobs, 0);
  EXPECT_EQ(Completion(R"({"prompt": "x", "prompt_logprobs": 20})").sampling.prompt_logprobs, 20);
  // Streaming works with echo, not with prompt_logprobs (vLLM).
  EXPECT_TRUE(Completion(R"({"prompt": "x", "echo": true, "stream": true})").sampling.stream);
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "prompt_logprobs": -1})"),
            BadRequest("'prompt_logprobs' must be at least 0, got -1", "prompt_logprobs"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "prompt_logprobs": 21})").param, "prompt_logprobs");
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "echo": false, "max_tokens": 0})"),
            BadRequest("'max_tokens' must be at least 1, got 0", "max_tokens"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "echo": true, "use_beam_search": true})"),
            BadRequest("'echo' is not supported with beam search (use_beam_search); leave it unset.", "echo"));
  EXPECT_EQ(CompletionError(R"({"prompt": "x", "prompt_logprobs": 1, "use_beam_search": true})").param,
            "prompt_logprobs");
}

TEST(OpenAiCompletion, EchoWithLogprobsAsksForThePromptsLogprobs) {
  SamplingContext sc;
  sc.prompt_tokens = 3;
  sc.max_model_len = 64;
  proto::SamplingParams p;
  CompletionRequest r = Completion(R"({"prompt": "x", "echo": true, "max_tokens": 0, "logprobs": 2})");
  ASSERT_FALSE(ToSamplingParams(r.sampling, sc, &p).has_value());
  EXPECT_EQ(p.prompt_logprobs, 2);
  EXPECT_EQ(p.max_tokens, 1);  // the engine runs one token the answer leaves out
  r = Completion(R"({"prompt": "x", "echo": true, "logprobs": 2, "prompt_logprobs": 4})");
  ASSERT_FALSE(ToSamplingParams(r.sampling, sc, &p).has_value());
  EXPECT_EQ(p.prompt_logprobs, 4);
  r = Completion(R"({"prompt": "x", "echo": true})");
  ASSERT_FALSE(ToSamplingParams(r.sampling, sc, &p).has_value());
  EXPECT_FALSE(p.prompt_logprobs.has_value());
}

TEST(OpenAiCompletion, AllFieldsParse) {
  CompletionRequest r = Completion(R"({
    "model": "m", "prompt": "p", "n": 2, "max_tokens": 50, "temperature": 0.7, "top_p": 0.9, "top_k": 40,
    "min_p": 0.05, "seed": -7, "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.2,
    "stop": "\n", "stop_token_ids": [2], "logprobs": 3, "prompt_logprobs": null, "ignore_eos": true, "min_tokens": 4,
    "skip_special_tokens": false, "spaces_between_special_tokens": false, "include_stop_str_in_output": true,
    "return_token_ids": true, "return_tokens_as_token_ids": true, "stream": false, "user": "u1", "priority": -1, "cache_salt": "salt", "request_id": "abc",
    "allowed_token_ids": [1, 2, 3], "add_special_tokens": false, "some_new_field": 1, "another": null})");
  SamplingRequest want;
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
  want.stop = {"\n"};
  want.stop_token_ids = {2};
  want.logprobs = 3;
  want.ignore_eos = true;
  want.min_tokens = 4;
  want.skip_special_tokens = false;
  want.spaces_between_special_tokens = false;
  want.include_stop_str_in_output = true;
  want.return_token_ids = true;
  want.return_tokens_as_token_ids = true;
  want.user = "u1";
  want.priority = -1;
  want.cache_salt = "salt";
  want.request_id = "abc";
  want.allowed_token_ids = {1, 2, 3};
  EXPECT_EQ(r.sampling, want);
  EXPECT_FALSE(r.add_special_tokens);
  // Unknown fields are accepted and reported, as vLLM does (it logs them).
  EXPECT_EQ(r.ignored_fields, (std::vector<std::string>{"another", "some_new_field"}));
}

TEST(OpenAiCompletion, StreamOptions) {
  CompletionRequest r = Completion(R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": true}})");
  EXPECT_TRUE(r.sampling.stream);
  EXPECT_TRUE(r.sampling.include_usage);
  r = Completion(R"({"prompt": "x", "stream": true, "stream_options": {"include_usage": false, "continuous_usage_stats": true}})");
  EXPECT_FALSE(r.sampling.include_usage);
  EXPECT_TRUE(r.sampling.continuous_usage_stats);
  r = Completion(R"({"prompt": "x", "stream": true})");
  EXPECT_FALSE(r.sampling.include_usage);
}

TEST(OpenAiChat, MessagesAreValidatedAndNormalized) {
  ChatCompletionRequest r = Chat(R"({"model": "m", "messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "content": "42", "tool_call_id": "c1"}]})");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[1]["content"], "a\nb");
  EXPECT_TRUE(r.messages[2]["content"].is_null());
  EXPECT_EQ(r.messages[2]["tool_calls"][0]["function"]["name"], "f");
  EXPECT_EQ(r.messages[3]["tool_call_id"], "c1");
  EXPECT_TRUE(r.add_generation_prompt);
  EXPECT_FALSE(r.add_special_tokens);
  EXPECT_FALSE(r.sampling.max_tokens.has_value());  // chat: up to the context by default
}

TEST(OpenAiChat, BadMessages) {
  EXPECT_EQ(ChatError(R"({"model": "m"})"), BadRequest("'messages' is required", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": []})"), BadRequest("'messages' must not be empty", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": "hi"})"), BadRequest("'messages' must be an array, got string", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [1]})"), BadRequest("messages[0] must be an object, got integer", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [{"content": "x"}]})"), BadRequest("messages[0].role must be a string", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "robot", "content": "x"}]})"),
            BadRequest("messages[0].role 'robot' is not one of system, developer, user, assistant, tool, function", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user"}]})"), BadRequest("messages[0].content is required", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": 5}]})"),
            BadRequest("messages[0].content must be a string or an array of content parts, got integer", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]})"),
            BadRequest("messages[0].content[0] has type 'image_url'; only 'text' content parts are supported by this model", "messages"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})"),
            BadRequest("messages[0].content[0].text must be a string", "messages"));
}

TEST(OpenAiChat, SamplingFieldsDifferFromCompletions) {
  ChatCompletionRequest r = Chat(R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 10, "max_completion_tokens": 20,
                                    "logprobs": true, "top_logprobs": 5})");
  EXPECT_EQ(r.sampling.max_tokens, 20);  // max_completion_tokens wins
  EXPECT_EQ(r.sampling.logprobs, 5);
  r = Chat(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true})");
  EXPECT_EQ(r.sampling.logprobs, 0);
  r = Chat(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": false})");
  EXPECT_FALSE(r.sampling.logprobs.has_value());
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": 3})"),
            BadRequest("'logprobs' must be a boolean, got integer", "logprobs"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})"),
            BadRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})"),
            BadRequest("'top_logprobs' must be at most 20, got 21", "top_logprobs"));
  EXPECT_EQ(ChatError(R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 0})"),
            BadRequest("'max_completion_tokens' must be at least 1, got 0", "max_completion_tokens"));
  EXPECT_TRUE(Chat(R"({"messages": [{"role": "user", "content": "x"}], "echo": true})").echo);
  EXPECT_EQ(Chat(R"({"messages": [{"role": "user", "content": "x"}], "prompt_logprobs": 3})").sampling.prompt_logprobs, 3);
}

TEST(OpenAiChat, TemplateControlsAndTools) {
  ChatCompletionRequest r = Chat(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "Sure"}],
      "add_generation_prompt": false, "continue_final_message": true, "chat_template_kwargs": {"enable_thinking": false},
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
      "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})");
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_TRUE(r.continue_final_message);
  EXPECT_EQ(r.chat_template_kwargs, json::parse(R"({"enable_thinking": false})"));
  EXPECT_EQ(r.tools[0]["function"]["name"], "get_weather");
  EXPECT_EQ(r.tool_choice["function"]["name"], "get_weather");

  const std::string user = R"("messages": [{"role": "user", "content": "x"}])";
  EXPECT_EQ(ChatError("{" + user + R"(, "continue_final_message": true})"),
            BadRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.", "continue_final_message"));
  EXPECT_EQ(ChatError("{" + user + R"(, "continue_final_message": true, "add_generation_prompt": false})"),
            BadRequest("`continue_final_message` needs the last message to be from the assistant.", "continue_final_message"));
  EXPECT_EQ(ChatError("{" + user + R"(, "chat_template_kwargs": [1]})"),
            BadRequest("'chat_template_kwargs' must be an object, got array", "chat_template_kwargs"));
  EXPECT_EQ(ChatError("{" + user + R"(, "tools": [{"type": "function"}]})"),
            BadRequest("tools[0].function must be an object with a string 'name'", "tools"));
  EXPECT_EQ(ChatError("{" + user + R"(, "tool_choice": "sometimes"})"),
            BadRequest("'tool_choice' must be 'none', 'auto', 'required' or a named function, got 'sometimes'", "tool_choice"));
  EXPECT_EQ(ChatError("{" + user + R"(, "tool_choice": "required"})"),
            BadRequest("'tool_choice' is 'required' but no 'tools' were given", "tool_choice"));
  EXPECT_EQ(ChatError("{" + user + R"(, "tool_choice": {"type": "function", "function": {"name": "nope"}}})"),
            BadRequest("'tool_choice' names function 'nope', which is not in 'tools'", "tool_choice"));
  EXPECT_EQ(ChatError("{" + user + R"(, "response_format": {"type": "xml"}})"),
            BadRequest("response_format type must be one of text, json_object, json_schema; got 'xml'", "response_format"));
}

TEST(OpenAiServer, ModelCheckApiKeyAndRequestIds) {
  EXPECT_FALSE(CheckModel(std::nullopt, {"m"}).has_value());
  EXPECT_FALSE(CheckModel("m", {"a", "m"}).has_value());
  EXPECT_EQ(CheckModel("x", {"m"}), ModelNotFound("x"));

  http::Filter filter = ApiKeyFilter("secret");
  http::HttpRequest req;
  std::optional<http::HttpResponse> denied = filter(req);
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ(denied->status, 401);
  EXPECT_EQ(json::parse(denied->body)["error"]["type"], "AuthenticationError");
  EXPECT_EQ(json::parse(denied->body)["error"]["code"], 401);
  req.headers = {{"Authorization", "Bearer wrong!"}};
  EXPECT_TRUE(filter(req).has_value());
  req.headers = {{"authorization", "Bearer secret"}};
  EXPECT_FALSE(filter(req).has_value());
  EXPECT_FALSE(ApiKeyFilter("")(http::HttpRequest{}).has_value());

  http::HttpRequest with_header;
  with_header.headers = {{"X-Request-Id", "abc"}};
  EXPECT_EQ(ResolveRequestId(with_header, "body", "cmpl-"), "cmpl-abc");
  EXPECT_EQ(ResolveRequestId(http::HttpRequest{}, "body", "cmpl-"), "cmpl-body");
  std::string random = ResolveRequestId(http::HttpRequest{}, std::nullopt, "chatcmpl-");
  EXPECT_EQ(random.size(), 9u + 32u);
  EXPECT_NE(random, ResolveRequestId(http::HttpRequest{}, std::nullopt, "chatcmpl-"));
}

TEST(OpenAiTokenize, RequestForms) {
  TokenizeRequest t;
  ASSERT_FALSE(ParseTokenizeRequest(R"({"model": "m", "prompt": "hi", "return_token_strs": true})", &t));
  EXPECT_EQ(t.prompt, "hi");
  EXPECT_TRUE(t.add_special_tokens);
  EXPECT_TRUE(t.return_token_strs);
  ASSERT_FALSE(ParseTokenizeRequest(R"({"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": false})", &t));
  EXPECT_FALSE(t.prompt.has_value());
  EXPECT_EQ(t.messages[0]["content"], "hi");
  EXPECT_FALSE(t.add_special_tokens);
  EXPECT_FALSE(t.add_generation_prompt);
  EXPECT_EQ(ParseTokenizeRequest(R"({"model": "m"})", &t), BadRequest("Either 'prompt' or 'messages' is required.", "prompt"));
  EXPECT_EQ(ParseTokenizeRequest(R"({"prompt": "a", "messages": []})", &t),
            BadRequest("Send either 'prompt' or 'messages', not both.", "messages"));
  EXPECT_EQ(ParseTokenizeRequest(R"({"prompt": 1})", &t), BadRequest("'prompt' must be a string, got integer", "prompt"));

  DetokenizeRequest d;
  ASSERT_FALSE(ParseDetokenizeRequest(R"({"model": "m", "tokens": [1, 2]})", &d));
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(ParseDetokenizeRequest(R"({"model": "m"})", &d), BadRequest("'tokens' is required", "tokens"));
  EXPECT_EQ(ParseDetokenizeRequest(R"({"tokens": [1, "a"]})", &d), BadRequest("'tokens[1]' must be an integer, got string", "tokens"));
}

}  // namespace
}  // namespace llmserve::frontend::openai
