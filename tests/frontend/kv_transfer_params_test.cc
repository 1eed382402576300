// vLLM's kv_transfer_params through the frontend (disaggregated prefill): a
// completion's or chat's object reaches the engine in
// SamplingParams.extra_args, and the object the engine's KV connector puts on
// a request's last output comes back at the top of the answer.
#include <gtest/gtest.h>
#include <msgpack.hpp>
#include <nlohmann/json.hpp>

#include "frontend/openai/completion_request.h"
#include "frontend/serving/generation_job.h"
#include "proto/encoded_value.h"
#include "tests/common/tokenizer_test_util.h"
#include "tests/frontend/fake_response_writer.h"

namespace llmserve::frontend::serving::kv_transfer_params_test {

using nlohmann::json;

// Answers each request (on Pump, as the engine client's output thread would:
// not inside Submit) with one token and finish "length", carrying `params`
// (msgpack) when set.
class OneTokenEngine : public EngineClient {
 public:
  Status Submit(proto::EngineCoreRequest request, std::shared_ptr<OutputSink> sink) override {
    submitted.push_back(request);
    sinks_.push_back(std::move(sink));
    return Status::Ok();
  }
  void Pump() {
    for (size_t i = 0; i < sinks_.size(); ++i) {
      proto::EngineCoreOutput out;
      out.request_id = submitted[i].request_id;
      out.new_token_ids = {9707};
      out.finish_reason = proto::FinishReason::kLength;
      out.kv_transfer_params = params;
      sinks_[i]->OnOutput(out);
    }
    sinks_.clear();
  }
  void Abort(const std::vector<std::string>&) override {}
  bool IsReady() const override { return true; }
  bool IsDead() const override { return false; }
  int32_t max_model_len() const override { return 64; }

  proto::EncodedValue params;
  std::vector<proto::EngineCoreRequest> submitted;

 private:
  std::vector<std::shared_ptr<OutputSink>> sinks_;
};

proto::EncodedValue Msgpack(const json& value) {
  const std::vector<uint8_t> bytes = json::to_msgpack(value);
  return proto::EncodedValue{std::string(bytes.begin(), bytes.end())};
}

// Runs one completion of `sampling` through a GenerationJob against `engine`
// and returns the answer's body.
json RunCompletion(const common::tokenizer::Tokenizer& tokenizer, OneTokenEngine& engine,
                   const openai::SamplingRequest& sampling) {
  ServingContext context;
  context.engine = &engine;
  context.tokenizer = &tokenizer;
  context.served_model_names = {"tiny"};
  JobSpec spec;
  spec.kind = ApiKind::kCompletion;
  spec.request_id = "cmpl-kv";
  spec.model = "tiny";
  spec.sampling = sampling;
  spec.prompts.push_back(JobPrompt{{9707, 11}, std::nullopt});
  auto writer = std::make_shared<frontend::testing::FakeResponseWriter>();
  std::make_shared<GenerationJob>(context, std::move(spec), writer)->Start();
  engine.Pump();
  EXPECT_EQ(writer->responses.size(), 1u);
  return writer->responses.empty() ? json() : json::parse(writer->responses[0].body);
}

TEST(KvTransferParams, RequestObjectReachesTheEngineAndTheConnectorsComesBack) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  openai::CompletionRequest cr;
  const json sent = {{"do_remote_decode", true}, {"remote_block_ids", {1, 2, 3}}};
  ASSERT_FALSE(openai::ParseCompletionRequest(json{{"prompt", "hi"}, {"max_tokens", 1}, {"kv_transfer_params", sent}}
                                                  .dump(),
                                              {}, &cr));
  OneTokenEngine engine;
  const json returned = {{"remote_engine_id", "e1"}, {"remote_block_ids", {7, 8}}, {"remote_port", 5600}};
  engine.params = Msgpack(returned);
  const json body = RunCompletion(*tok, engine, cr.sampling);

  ASSERT_EQ(engine.submitted.size(), 1u);
  proto::EncodedValue entry;
  ASSERT_TRUE(proto::FindEncodedEntry(engine.submitted[0].sampling_params.extra_args, "kv_transfer_params", &entry).ok());
  EXPECT_EQ(json::from_msgpack(entry.msgpack), sent);
  EXPECT_EQ(body["kv_transfer_params"], returned) << body.dump();
}

TEST(KvTransferParams, AbsentMeansNoExtraArgsAndNoField) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  OneTokenEngine engine;
  openai::SamplingRequest sampling;
  sampling.max_tokens = 1;
  const json body = RunCompletion(*tok, engine, sampling);
  ASSERT_EQ(engine.submitted.size(), 1u);
  EXPECT_TRUE(engine.submitted[0].sampling_params.extra_args.empty());
  EXPECT_FALSE(body.contains("kv_transfer_params"));
}

TEST(KvTransferParams, NotAnObjectIsA400) {
  openai::CompletionRequest cr;
  auto e = openai::ParseCompletionRequest(R"({"prompt": "hi", "kv_transfer_params": [1]})", {}, &cr);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->param, "kv_transfer_params");
}

}  // namespace llmserve::frontend::serving::kv_transfer_params_test
