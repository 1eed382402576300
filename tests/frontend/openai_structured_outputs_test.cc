// Structured-output request fields: structured_outputs, response_format and
// the legacy guided_* names all become one StructuredOutputsParams on the
// engine's SamplingParams; constraints that do not compile, or that this
// server cannot enforce, are 400s naming the field and the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/openai/chat_request.h"
#include "frontend/openai/completion_request.h"

namespace llmserve::frontend::openai {
namespace {

using nlohmann::json;

const std::string kUser = R"("model": "m", "messages": [{"role": "user", "content": "hi"}])";

std::optional<proto::StructuredOutputsParams> ChatConstraint(const std::string& fields) {
  ChatCompletionRequest req;
  MaybeError e = ParseChatCompletionRequest("{" + kUser + ", " + fields + "}", ParseOptions{}, &req);
  EXPECT_FALSE(e.has_value()) << e->message;
  EXPECT_TRUE(req.ignored_fields.empty()) << req.ignored_fields.front();
  return req.sampling.structured_outputs;
}

ApiError StructuredChatError(const std::string& fields) {
  ChatCompletionRequest req;
  MaybeError e = ParseChatCompletionRequest("{" + kUser + ", " + fields + "}", ParseOptions{}, &req);
  EXPECT_TRUE(e.has_value()) << "parsed: " << fields;
  return e.value_or(ApiError{});
}

TEST(OpenAiStructuredOutputs, ResponseFormatJsonSchema) {
  auto p = ChatConstraint(R"("response_format": {"type": "json_schema", "json_schema":
      {"name": "person", "strict": true, "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(json::parse(*p->json), json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"}}})"));
  EXPECT_EQ(p->NumConstraints(), 1);
}

TEST(OpenAiStructuredOutputs, ResponseFormatJsonObjectAndText) {
  auto p = ChatConstraint(R"("response_format": {"type": "json_object"})");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->json_object);
  EXPECT_FALSE(ChatConstraint(R"("response_format": {"type": "text"})").has_value());
}

TEST(OpenAiStructuredOutputs, StructuredOutputsObject) {
  auto p = ChatConstraint(R"("structured_outputs": {"regex": "[0-9]{3}", "disable_any_whitespace": true})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p->regex, "[0-9]{3}");
  EXPECT_TRUE(p->disable_any_whitespace);
  p = ChatConstraint(R"("structured_outputs": {"choice": ["a", "b"]})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p->choice, (std::vector<std::string>{"a", "b"}));
  p = ChatConstraint(R"("structured_outputs": {"grammar": "root ::= \"x\" | \"y\""})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p->grammar, R"(root ::= "x" | "y")");
  p = ChatConstraint(R"("structured_outputs": {"json": "{\"type\": \"string\"}"})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p->json, R"({"type": "string"})");
}

TEST(OpenAiStructuredOutputs, LegacyGuidedFieldsOnCompletions) {
  CompletionRequest req;
  MaybeError e = ParseCompletionRequest(R"({"model": "m", "prompt": "x", "guided_choice": ["yes", "no"],
      "guided_decoding_backend": "xgrammar"})", ParseOptions{}, &req);
  ASSERT_FALSE(e.has_value()) << e->message;
  ASSERT_TRUE(req.sampling.structured_outputs.has_value());
  EXPECT_EQ(*req.sampling.structured_outputs->choice, (std::vector<std::string>{"yes", "no"}));
  EXPECT_TRUE(req.ignored_fields.empty());
  e = ParseCompletionRequest(R"({"model": "m", "prompt": "x", "guided_json": {"type": "object"}})", ParseOptions{}, &req);
  ASSERT_FALSE(e.has_value()) << e->message;
  EXPECT_EQ(*req.sampling.structured_outputs->json, R"({"type":"object"})");
}

TEST(OpenAiStructuredOutputs, BadConstraintsAre400sWithTheReason) {
  EXPECT_EQ(StructuredChatError(R"("response_format": {"type": "json_schema"})"),
            BadRequest("response_format of type json_schema needs a 'json_schema' object", "response_format"));
  ApiError e = StructuredChatError(R"("response_format": {"type": "json_schema", "json_schema": {"name": "x",
      "schema": {"type": "object", "patternProperties": {"a": {}}}}})");
  EXPECT_EQ(e.param, "response_format");
  EXPECT_NE(e.message.find("patternProperties"), std::string::npos) << e.message;
  e = StructuredChatError(R"("structured_outputs": {"regex": "a(b"})");
  EXPECT_EQ(e.param, "structured_outputs");
  EXPECT_NE(e.message.find("invalid regex"), std::string::npos) << e.message;
  e = StructuredChatError(R"("guided_grammar": "root ::= \"x")");
  EXPECT_EQ(e.param, "guided_grammar");
  EXPECT_NE(e.message.find("invalid grammar"), std::string::npos) << e.message;
  e = StructuredChatError(R"("structured_outputs": {"json": "{not json"})");
  EXPECT_NE(e.message.find("invalid JSON schema"), std::string::npos) << e.message;
  e = StructuredChatError(R"("structured_outputs": {"regex": "a", "choice": ["a"]})");
  EXPECT_NE(e.message.find("exactly one"), std::string::npos) << e.message;
  e = StructuredChatError(R"("structured_outputs": {"choice": []})");
  EXPECT_EQ(e.param, "structured_outputs.choice");
  e = StructuredChatError(R"("structured_outputs": {"whitespace_pattern": "[ ]*", "json_object": true})");
  EXPECT_NE(e.message.find("whitespace_pattern is not supported"), std::string::npos) << e.message;
  e = StructuredChatError(R"("structured_outputs": {"colour": "red"})");
  EXPECT_EQ(e.message, "unknown field 'structured_outputs.colour'");
  e = StructuredChatError(R"("response_format": {"type": "structural_tag"})");
  EXPECT_NE(e.message.find("not supported"), std::string::npos);
  e = StructuredChatError(R"("structured_outputs": {"regex": "a"}, "guided_regex": "b")");
  EXPECT_NE(e.message.find("not both"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::frontend::openai
