// BeamSearchJob (frontend/serving/beam_search_job.h) against a fake engine
// whose logprob rows are written by hand: the step requests it sends (one
// token, 2 × n logprobs, all live beams at once), the response vLLM gives
// (choices best first, finish_reason / stop_reason of an EOS-ended beam,
// token_ids, usage), a disconnect or an engine error aborting the steps in
// flight (each step request measured in /metrics); a chat stream; and the
// 400s for fields beam search cannot honour.
#include "frontend/serving/beam_search_job.h"

#include <functional>
#include <map>
#include <mutex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/openai/chat_request.h"
#include "frontend/openai/completion_request.h"
#include "frontend/metrics/frontend_metrics.h"
#include "tests/common/tokenizer_test_util.h"
#include "tests/frontend/fake_response_writer.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::serving::beam_search_job_test {

using nlohmann::json;

constexpr int32_t kEos = 151645;  // <|im_end|>, the Qwen3 tokenizer's EOS

// Rows keyed by a beam's last token: (token, logprob) in the engine's order.
using RowTable = std::map<int32_t, std::vector<std::pair<int32_t, float>>>;

class FakeEngine : public EngineClient {
 public:
  explicit FakeEngine(RowTable rows) : rows_(std::move(rows)) {}

  Status Submit(proto::EngineCoreRequest request, std::shared_ptr<OutputSink> sink) override {
    std::lock_guard<std::mutex> lock(mu_);
    submitted.push_back(request);
    sink->OnRouted(0);
    queue_.emplace_back(std::move(request), std::move(sink));
    return Status::Ok();
  }
  void Abort(const std::vector<std::string>& ids) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& id : ids) {
      aborted.push_back(id);
      std::erase_if(queue_, [&](const auto& q) { return q.first.request_id == id; });
    }
  }
  bool IsReady() const override { return true; }
  bool IsDead() const override { return false; }
  int32_t max_model_len() const override { return 64; }

  // Answers every queued request, as the engine's output thread would; returns how many.
  size_t Pump(std::optional<StatusCode> error = std::nullopt) {
    std::vector<std::pair<proto::EngineCoreRequest, std::shared_ptr<OutputSink>>> batch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch.swap(queue_);
    }
    for (auto& [request, sink] : batch) {
      proto::EngineCoreOutput out;
      out.request_id = request.request_id;
      out.finish_reason = proto::FinishReason::kLength;
      if (error) {
        out.error_code = error;
        out.error_message = "queue full";
      } else {
        proto::Logprobs lp;
        const auto& row = rows_.at(request.prompt_token_ids.back());
        lp.token_ids.emplace_back(1, row.front().first);  // the sampled (greedy) token first
        lp.logprobs.emplace_back(1, row.front().second);
        for (const auto& [id, logprob] : row) {
          lp.token_ids[0].push_back(id);
          lp.logprobs[0].push_back(logprob);
        }
        out.new_token_ids = {row.front().first};
        out.new_logprobs = std::move(lp);
      }
      sink->OnOutputFrom(out, OutputOrigin{0, 1.0});
    }
    return batch.size();
  }

  std::vector<proto::EngineCoreRequest> submitted;
  std::vector<std::string> aborted;

 private:
  RowTable rows_;
  std::mutex mu_;
  std::vector<std::pair<proto::EngineCoreRequest, std::shared_ptr<OutputSink>>> queue_;
};

using FakeWriter = testing::FakeResponseWriter;

// Prompt [100], n = 2, two steps. Beam 200 meets EOS first (-0.15 over length 2);
// beam 201 goes on to 310 and 311 (-0.5 and -0.6 over length 3).
RowTable TwoStepRows() {
  return {{100, {{200, -0.1f}, {201, -0.2f}, {202, -3.0f}, {203, -4.0f}}},
          {200, {{kEos, -0.05f}, {300, -1.0f}, {301, -1.1f}, {302, -5.0f}}},
          {201, {{310, -0.3f}, {311, -0.4f}, {312, -6.0f}, {313, -7.0f}}}};
}

struct Fixture {
  std::unique_ptr<common::tokenizer::Tokenizer> tokenizer;
  FakeEngine engine{TwoStepRows()};
  ServingContext context;
  std::shared_ptr<FakeWriter> writer = std::make_shared<FakeWriter>();

  explicit Fixture(std::unique_ptr<common::tokenizer::Tokenizer> t) : tokenizer(std::move(t)) {
    context.engine = &engine;
    context.tokenizer = tokenizer.get();
    context.served_model_names = {"tiny"};
    context.eos_token_ids = {kEos, 151643};
  }

  std::shared_ptr<BeamSearchJob> Start(ApiKind kind, bool return_token_ids = true, bool stream = false,
                                       std::optional<int32_t> logprobs = std::nullopt) {
    JobSpec spec;
    spec.kind = kind;
    spec.request_id = "cmpl-beam";
    spec.model = "tiny";
    spec.sampling.n = 2;
    spec.sampling.max_tokens = 2;
    spec.sampling.temperature = 0.0;
    spec.sampling.use_beam_search = true;
    spec.sampling.return_token_ids = return_token_ids;
    spec.sampling.stream = stream;
    spec.sampling.include_usage = stream;
    spec.sampling.logprobs = logprobs;
    spec.sampling.return_tokens_as_token_ids = true;
    spec.chat_logprobs = logprobs.has_value();
    spec.prompts.push_back(JobPrompt{{100}, std::nullopt});
    auto job = std::make_shared<BeamSearchJob>(context, std::move(spec), writer);
    job->Start();
    return job;
  }
};

TEST(BeamSearchJob, SendsEachStepsBeamsAtOnceAndAnswersTheBestBeams) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  f.Start(ApiKind::kCompletion);
  ASSERT_EQ(f.engine.submitted.size(), 1u);
  const proto::SamplingParams& step = f.engine.submitted[0].sampling_params;
  EXPECT_EQ(step.max_tokens, 1);
  EXPECT_EQ(step.logprobs, 4);
  EXPECT_EQ(step.temperature, 0.0);
  EXPECT_EQ(step.n, 1);
  EXPECT_EQ(f.engine.Pump(), 1u);
  ASSERT_EQ(f.engine.submitted.size(), 3u);  // both live beams in flight together
  EXPECT_EQ(f.engine.submitted[1].prompt_token_ids, (std::vector<int32_t>{100, 200}));
  EXPECT_EQ(f.engine.submitted[2].prompt_token_ids, (std::vector<int32_t>{100, 201}));
  EXPECT_TRUE(f.writer->responses.empty());
  EXPECT_EQ(f.engine.Pump(), 2u);
  EXPECT_EQ(f.engine.submitted.size(), 3u);  // max_tokens reached
  ASSERT_EQ(f.writer->responses.size(), 1u);
  ASSERT_EQ(f.writer->responses[0].status, 200);
  const json body = json::parse(f.writer->responses[0].body);
  EXPECT_EQ(body["object"], "text_completion");
  ASSERT_EQ(body["choices"].size(), 2u);
  const json& first = body["choices"][0];
  EXPECT_EQ(first["index"], 0);
  EXPECT_EQ(first["token_ids"], json::array({200}));  // the EOS is not kept
  EXPECT_EQ(first["text"], f.tokenizer->Decode(std::vector<int32_t>{200}, true));
  EXPECT_EQ(first["finish_reason"], "stop");
  EXPECT_EQ(first["stop_reason"], kEos);  // vLLM's beam search reports the EOS id
  EXPECT_EQ(first["prompt_token_ids"], json::array({100}));
  const json& second = body["choices"][1];
  EXPECT_EQ(second["index"], 1);
  EXPECT_EQ(second["token_ids"], json::array({201, 310}));
  EXPECT_EQ(second["text"], f.tokenizer->Decode(std::vector<int32_t>{201, 310}, true));
  EXPECT_EQ(second["finish_reason"], "length");
  EXPECT_TRUE(second["stop_reason"].is_null());
  // The prompt once; the output tokens of the returned beams.
  EXPECT_EQ(body["usage"]["prompt_tokens"], 1);
  EXPECT_EQ(body["usage"]["completion_tokens"], 3);
  EXPECT_TRUE(f.engine.aborted.empty());
}

TEST(BeamSearchJob, LogprobsComeFromTheRowsTheBeamsGrewFrom) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  f.Start(ApiKind::kCompletion, false, false, /*logprobs=*/2);
  f.engine.Pump();
  f.engine.Pump();
  ASSERT_EQ(f.writer->responses.size(), 1u);
  const json body = json::parse(f.writer->responses[0].body);
  const json& first = body["choices"][0]["logprobs"];  // [200], ended by EOS: no entry for the EOS
  EXPECT_EQ(first["tokens"], json::array({"token_id:200"}));
  EXPECT_NEAR(first["token_logprobs"][0].get<double>(), -0.1, 1e-6);
  const json& second = body["choices"][1]["logprobs"];  // [201, 310]
  EXPECT_EQ(second["tokens"], json::array({"token_id:201", "token_id:310"}));
  EXPECT_NEAR(second["token_logprobs"][0].get<double>(), -0.2, 1e-6);
  EXPECT_NEAR(second["token_logprobs"][1].get<double>(), -0.3, 1e-6);
  // The top 2 of the row each token came from.
  EXPECT_EQ(second["top_logprobs"][1].size(), 2u);
  EXPECT_NEAR(second["top_logprobs"][1]["token_id:311"].get<double>(), -0.4, 1e-6);
  EXPECT_TRUE(second["top_logprobs"][0].contains("token_id:200"));
}

TEST(BeamSearchJob, ChatAnswersAChatCompletion) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  f.Start(ApiKind::kChat, false);
  f.engine.Pump();
  f.engine.Pump();
  ASSERT_EQ(f.writer->responses.size(), 1u);
  const json body = json::parse(f.writer->responses[0].body);
  EXPECT_EQ(body["object"], "chat.completion");
  ASSERT_EQ(body["choices"].size(), 2u);
  EXPECT_EQ(body["choices"][0]["message"]["content"], f.tokenizer->Decode(std::vector<int32_t>{200}, true));
  EXPECT_EQ(body["choices"][1]["message"]["content"], f.tokenizer->Decode(std::vector<int32_t>{201, 310}, true));
  EXPECT_EQ(body["usage"]["completion_tokens"], 3);
}

// The JSON payloads of the `data:` events of an SSE stream ("[DONE]" as a string).
std::vector<json> SseEvents(const std::string& stream) {
  std::vector<json> out;
  size_t at = 0;
  while ((at = stream.find("data: ", at)) != std::string::npos) {
    const size_t end = stream.find("\n\n", at);
    const std::string data = stream.substr(at + 6, end - at - 6);
    out.push_back(data == "[DONE]" ? json(data) : json::parse(data));
    at = end;
  }
  return out;
}

TEST(BeamSearchJob, ChatStreamSendsRoleChunksThenEachWholeMessage) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  f.Start(ApiKind::kChat, false, /*stream=*/true);
  EXPECT_EQ(f.writer->stream_status, 200);  // the stream opens at once
  f.engine.Pump();
  EXPECT_EQ(f.writer->stream, "");
  f.engine.Pump();
  EXPECT_TRUE(f.writer->responses.empty());
  EXPECT_TRUE(f.writer->stream_ended);
  const std::vector<json> events = SseEvents(f.writer->stream);
  ASSERT_EQ(events.size(), 6u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(events[i]["object"], "chat.completion.chunk");
    EXPECT_EQ(events[i]["choices"][0]["index"], i);
    EXPECT_EQ(events[i]["choices"][0]["delta"]["role"], "assistant");
  }
  EXPECT_EQ(events[2]["choices"][0]["delta"]["content"], f.tokenizer->Decode(std::vector<int32_t>{200}, true));
  EXPECT_EQ(events[2]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(events[2]["choices"][0]["stop_reason"], kEos);
  EXPECT_EQ(events[3]["choices"][0]["index"], 1);
  EXPECT_EQ(events[3]["choices"][0]["delta"]["content"], f.tokenizer->Decode(std::vector<int32_t>{201, 310}, true));
  EXPECT_EQ(events[3]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(events[4]["choices"], json::array());
  EXPECT_EQ(events[4]["usage"]["completion_tokens"], 3);
  EXPECT_EQ(events[5], "[DONE]");
}

TEST(BeamSearchJob, DisconnectAbortsTheStepInFlight) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  metrics::FrontendMetrics m({"tiny", {0}});
  f.context.metrics = &m;
  f.Start(ApiKind::kCompletion);
  f.engine.Pump();
  ASSERT_TRUE(f.writer->on_disconnect);
  f.writer->on_disconnect();
  EXPECT_EQ(f.engine.aborted, (std::vector<std::string>{f.engine.submitted[1].request_id,
                                                         f.engine.submitted[2].request_id}));
  EXPECT_EQ(f.engine.Pump(), 0u);
  EXPECT_TRUE(f.writer->responses.empty());
  // Each step request counts in /metrics as the engine request it is.
  const testing::PromScrape s = testing::ParsePrometheusText(m.Render());
  EXPECT_EQ(s.Value("vllm:request_success_total", {{"engine", "0"}, {"finished_reason", "length"}}), 1.0);
  EXPECT_EQ(s.Value("vllm:request_success_total", {{"engine", "0"}, {"finished_reason", "abort"}}), 2.0);
}

TEST(BeamSearchJob, EngineRefusalFailsTheRequestAndAbortsTheRest) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  f.Start(ApiKind::kCompletion);
  f.engine.Pump();
  f.engine.Pump(StatusCode::kResourceExhausted);
  ASSERT_EQ(f.writer->responses.size(), 1u);
  EXPECT_EQ(f.writer->responses[0].status, 429);
  // The first refusal aborts its sibling, which therefore gets no answer.
  EXPECT_EQ(f.engine.aborted, (std::vector<std::string>{f.engine.submitted[2].request_id}));
}

TEST(BeamSearchJob, PromptTooLongForMaxTokensIsA400) {
  LLMSERVE_LOAD_REAL_TOKENIZER_OR_SKIP(tok, "qwen3");
  Fixture f(std::move(tok));
  JobSpec spec;
  spec.kind = ApiKind::kCompletion;
  spec.request_id = "cmpl-long";
  spec.sampling.use_beam_search = true;
  spec.sampling.max_tokens = 64;
  spec.prompts.push_back(JobPrompt{{100, 101}, std::nullopt});
  std::make_shared<BeamSearchJob>(f.context, std::move(spec), f.writer)->Start();
  ASSERT_EQ(f.writer->responses.size(), 1u);
  EXPECT_EQ(f.writer->responses[0].status, 400);
  EXPECT_TRUE(f.engine.submitted.empty());
}

// The error a completion body gets, or "" when it parses.
std::string CompletionError(const std::string& body, int32_t max_logprobs = 20) {
  openai::CompletionRequest r;
  openai::ParseOptions options;
  options.max_logprobs = max_logprobs;
  auto e = openai::ParseCompletionRequest(body, options, &r);
  return e ? e->param.value_or("?") : "";
}

std::string ChatError(const std::string& body) {
  openai::ChatCompletionRequest r;
  auto e = openai::ParseChatCompletionRequest(body, openai::ParseOptions{}, &r);
  return e ? e->param.value_or("?") : "";
}

TEST(BeamSearchRequest, ReadsUseBeamSearchAndLengthPenalty) {
  openai::CompletionRequest r;
  ASSERT_FALSE(openai::ParseCompletionRequest(
      R"({"prompt": "hi", "n": 3, "use_beam_search": true, "length_penalty": 0.5, "temperature": 0,
          "ignore_eos": true, "include_stop_str_in_output": true, "top_p": 1.0, "seed": 3})",
      openai::ParseOptions{}, &r));
  EXPECT_TRUE(r.sampling.use_beam_search);
  EXPECT_EQ(r.sampling.length_penalty, 0.5);
  EXPECT_TRUE(r.ignored_fields.empty());
}

TEST(BeamSearchRequest, FieldsBeamSearchCannotHonourAre400s) {
  const std::string beam = R"({"prompt": "hi", "use_beam_search": true, )";
  EXPECT_EQ(CompletionError(beam + R"("stream": true})"), "stream");
  EXPECT_EQ(CompletionError(beam + R"("logprobs": 1})"), "");  // from the beams' rows, as vLLM
  EXPECT_EQ(CompletionError(beam + R"("stop": ["x"]})"), "stop");
  EXPECT_EQ(CompletionError(beam + R"("stop_token_ids": [5]})"), "stop_token_ids");
  EXPECT_EQ(CompletionError(beam + R"("min_tokens": 1})"), "min_tokens");
  EXPECT_EQ(CompletionError(beam + R"("top_p": 0.9})"), "top_p");
  EXPECT_EQ(CompletionError(beam + R"("top_k": 5})"), "top_k");
  EXPECT_EQ(CompletionError(beam + R"("min_p": 0.1})"), "min_p");
  EXPECT_EQ(CompletionError(beam + R"("repetition_penalty": 1.2})"), "repetition_penalty");
  EXPECT_EQ(CompletionError(beam + R"("presence_penalty": 0.5})"), "presence_penalty");
  EXPECT_EQ(CompletionError(beam + R"("frequency_penalty": 0.5})"), "frequency_penalty");
  EXPECT_EQ(CompletionError(beam + R"("logit_bias": {"5": 1}})"), "logit_bias");
  EXPECT_EQ(CompletionError(beam + R"("allowed_token_ids": [5]})"), "allowed_token_ids");
  EXPECT_EQ(CompletionError(beam + R"("response_format": {"type": "json_object"}})"), "structured_outputs");
  EXPECT_EQ(CompletionError(beam + R"("n": 11})"), "n");  // 22 logprobs > 20
  EXPECT_EQ(CompletionError(beam + R"("n": 10})"), "");
  EXPECT_EQ(CompletionError(beam + R"("n": 3})", 4), "n");
  EXPECT_EQ(CompletionError(R"({"prompt": "hi", "length_penalty": 2.0})"), "length_penalty");
  EXPECT_EQ(CompletionError(R"({"prompt": "hi", "length_penalty": 1.0})"), "");
  EXPECT_EQ(CompletionError(R"({"prompt": "hi", "use_beam_search": "yes"})"), "use_beam_search");

  const std::string chat = R"({"messages": [{"role": "user", "content": "hi"}], "use_beam_search": true, )";
  EXPECT_EQ(ChatError(chat + R"("stream": true})"), "");  // vLLM streams chat beam search
  EXPECT_EQ(ChatError(chat + R"("logprobs": true, "top_logprobs": 2})"), "");
  EXPECT_EQ(ChatError(chat + R"("stop": "x"})"), "stop");
  EXPECT_EQ(ChatError(chat + R"("response_format": {"type": "json_object"}})"), "structured_outputs");
  EXPECT_EQ(ChatError(chat + R"("n": 2})"), "");
}

}  // namespace llmserve::frontend::serving::beam_search_job_test
