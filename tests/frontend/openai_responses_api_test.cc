// The Responses API (POST /v1/responses): request parsing (input forms,
// instructions, text.format, the fields that are 400s), the response object
// and stream events' shapes, and the store's bound (objects and conversations
// forgotten together).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/openai/responses_objects.h"
#include "frontend/openai/responses_request.h"
#include "frontend/serving/response_store.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;

ResponsesRequest Parse(const std::string& body) {
  ResponsesRequest req;
  MaybeError e = ParseResponsesRequest(body, ParseOptions{}, &req);
  EXPECT_FALSE(e.has_value()) << e->message;
  return req;
}

ApiError Error(const std::string& body) {
  ResponsesRequest req;
  MaybeError e = ParseResponsesRequest(body, ParseOptions{}, &req);
  EXPECT_TRUE(e.has_value()) << "parsed: " << body;
  return e.value_or(ApiError{});
}

TEST(ResponsesRequest, InputIsAStringOrMessagesOfTextParts) {
  ResponsesRequest r = Parse(R"({"input": "hi", "instructions": "brief", "max_output_tokens": 7,
                                 "temperature": 0.5, "store": false, "metadata": {"k": "v"}})");
  EXPECT_EQ(r.input_messages, json::parse(R"([{"role": "user", "content": "hi"}])"));
  EXPECT_EQ(r.instructions, "brief");
  EXPECT_EQ(r.sampling.max_tokens, 7);
  EXPECT_EQ(r.sampling.temperature, 0.5);
  EXPECT_FALSE(r.store);
  EXPECT_EQ(r.metadata["k"], "v");
  r = Parse(R"({"input": [{"role": "developer", "content": "rules"},
                          {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"},
                                                                           {"type": "input_text", "text": "b"}]},
                          {"role": "assistant", "content": [{"type": "output_text", "text": "c"}]}]})");
  EXPECT_EQ(r.input_messages, json::parse(R"([{"role": "system", "content": "rules"},
                                              {"role": "user", "content": "a\nb"},
                                              {"role": "assistant", "content": "c"}])"));
  EXPECT_TRUE(r.store);
}

TEST(ResponsesRequest, WhatWouldChangeTheAnswerIsA400) {
  EXPECT_EQ(Error(R"({})").param, "input");
  EXPECT_EQ(Error(R"({"input": []})").param, "input");
  EXPECT_EQ(Error(R"({"input": [{"type": "function_call_output", "output": "x"}]})").param, "input");
  EXPECT_EQ(Error(R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]})").param,
            "input");
  EXPECT_EQ(Error(R"({"input": [{"role": "tool", "content": "x"}]})").param, "input");
  EXPECT_EQ(Error(R"({"input": "x", "tools": [{"type": "function", "name": "f"}]})").param, "tools");
  EXPECT_EQ(Error(R"({"input": "x", "tool_choice": "required"})").param, "tool_choice");
  EXPECT_EQ(Error(R"({"input": "x", "background": true})").param, "background");
  EXPECT_EQ(Error(R"({"input": "x", "truncation": "auto"})").param, "truncation");
  EXPECT_EQ(Error(R"({"input": "x", "top_logprobs": 2})").param, "top_logprobs");
  EXPECT_EQ(Error(R"({"input": "x", "n": 2})").param, "n");
  EXPECT_EQ(Error(R"({"input": "x", "max_output_tokens": 0})").param, "max_output_tokens");
  EXPECT_EQ(Error(R"({"input": "x", "text": {"format": {"type": "yaml"}}})").param, "text.format");
  EXPECT_EQ(Error(R"({"input": "x", "text": {"format": {"type": "json_schema", "schema": {"type": "nope"}}}})").status,
            400);
  // Fields of the wrong JSON type are 400s, never an exception (found by fuzz.openai_request).
  EXPECT_EQ(Error(R"({"input": [{"role": "user", "content": [{"type": 4, "text": "hi"}]}]})").param, "input");
  EXPECT_EQ(Error(R"({"input": [{"type": 7, "role": "user", "content": "hi"}]})").param, "input");
  EXPECT_EQ(Error(R"({"input": [{"role": 1, "content": "hi"}]})").param, "input");
  EXPECT_EQ(Error(R"({"input": "x", "text": {"format": {"type": 3}}})").param, "text.format");
  // Accepted, no effect on a text answer; unknown names are listed.
  ResponsesRequest r = Parse(R"({"input": "x", "tools": [], "tool_choice": "auto", "reasoning": {"effort": "low"},
                                 "parallel_tool_calls": false, "truncation": "disabled", "frobnicate": 1})");
  EXPECT_EQ(r.ignored_fields, std::vector<std::string>{"frobnicate"});
}

TEST(ResponsesRequest, TextFormatBecomesAConstraint) {
  ResponsesRequest r = Parse(R"({"input": "x", "text": {"format": {"type": "json_schema", "name": "n",
      "schema": {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "string"}}}}}})");
  ASSERT_TRUE(r.sampling.structured_outputs);
  // The client's key order survives (b before a).
  EXPECT_LT(r.sampling.structured_outputs->json->find("\"b\""), r.sampling.structured_outputs->json->find("\"a\""));
  r = Parse(R"({"input": "x", "text": {"format": {"type": "json_object"}}})");
  ASSERT_TRUE(r.sampling.structured_outputs);
  EXPECT_TRUE(r.sampling.structured_outputs->json_object);
  EXPECT_FALSE(Parse(R"({"input": "x", "text": {"format": {"type": "text"}}})").sampling.structured_outputs);
}

TEST(ResponsesObjects, ResponseAndStreamEvents) {
  ResponseFacts facts;
  facts.id = "resp_1";
  facts.message_id = "msg_1";
  facts.created_at = 5;
  facts.model = "m";
  facts.request = Parse(R"({"input": "x", "max_output_tokens": 3})");
  json done = ResponseObject(facts, "incomplete", "abc", Usage{4, 3, 1});
  EXPECT_EQ(done["output"][0]["content"][0], json::parse(R"({"type": "output_text", "text": "abc", "annotations": []})"));
  EXPECT_EQ(done["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(done["usage"]["total_tokens"], 7);
  EXPECT_EQ(done["usage"]["input_tokens_details"]["cached_tokens"], 1);
  EXPECT_EQ(done["max_output_tokens"], 3);
  EXPECT_TRUE(ResponseObject(facts, "completed", "abc", Usage{})["incomplete_details"].is_null());

  ResponseEvents events(facts);
  std::vector<json> all = events.Opening();
  all.push_back(events.TextDelta("ab"));
  for (json& e : events.Closing("ab", "completed", Usage{})) all.push_back(std::move(e));
  std::vector<std::string> types;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]["sequence_number"], i);
    types.push_back(all[i]["type"]);
  }
  EXPECT_EQ(types, (std::vector<std::string>{"response.created", "response.in_progress", "response.output_item.added",
                                             "response.content_part.added", "response.output_text.delta",
                                             "response.output_text.done", "response.content_part.done",
                                             "response.output_item.done", "response.completed"}));
  EXPECT_EQ(all[0]["response"]["status"], "in_progress");
  EXPECT_EQ(all[4]["item_id"], "msg_1");
  EXPECT_EQ(all.back()["response"]["output"][0]["content"][0]["text"], "ab");
}

TEST(ResponseStore, ForgetsTheOldestPastItsCapacity) {
  serving::ResponseStore store(2);
  store.Put("a", json::array({1}), {{"id", "a"}});
  store.Put("b", json::array({2}), {{"id", "b"}});
  store.Put("a", json::array({3}), {{"id", "a3"}});  // replaced, still the oldest
  store.Put("c", json::array({4}), {{"id", "c"}});
  EXPECT_FALSE(store.Get("a"));
  EXPECT_FALSE(store.GetResponse("a"));
  EXPECT_EQ(*store.Get("b"), json::array({2}));
  EXPECT_EQ(*store.GetResponse("b"), json({{"id", "b"}}));
  EXPECT_EQ(*store.Get("c"), json::array({4}));
  EXPECT_EQ(*store.GetResponse("c"), json({{"id", "c"}}));
}

}  // namespace
}  // namespace llmserve::frontend::openai
