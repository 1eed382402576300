#pragma once
// GenerationJob: one HTTP completion, chat or responses request in flight. It owns the
// engine requests of all its choices (prompts × n), turns each choice's token
// stream into text (incremental detokenization, stop strings — a matched stop
// string aborts that engine request), and answers the client: SSE chunks as
// text arrives when streaming, one response object when all choices end.
//
// Threads: engine outputs arrive on the engine client's I/O thread; a client
// disconnect arrives on an HTTP I/O thread. A mutex serialises them.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/tokenizer/incremental_detokenizer.h"
#include "frontend/http/response_writer.h"
#include "frontend/http/sse.h"
#include "frontend/openai/responses.h"
#include "frontend/openai/responses_objects.h"
#include "frontend/openai/sampling_request.h"
#include "frontend/serving/chat_output.h"
#include "frontend/serving/response_store.h"
#include "frontend/serving/serving_context.h"
#include "proto/engine_core_request.h"

namespace llmserve::frontend::serving {

enum class ApiKind { kCompletion, kChat, kResponses };

// One prompt of the request, tokenized.
struct JobPrompt {
  std::vector<int32_t> token_ids;
  std::optional<std::string> text;  // the text it came from, for the request log
};

struct JobSpec {
  ApiKind kind = ApiKind::kCompletion;
  std::string request_id;            // "cmpl-..." / "chatcmpl-..."
  std::string model;                 // served model name echoed back
  std::optional<std::string> lora_name;  // the LoRA adapter "model" named, if it names one
  openai::SamplingRequest sampling;  // the client's sampling fields
  std::vector<JobPrompt> prompts;
  bool chat_logprobs = false;        // chat: "logprobs": true
  std::string chat_echo;             // chat with echo: the text each reply starts with
  ChatOutputOptions chat_output;     // chat: tool calls and reasoning
  std::optional<bool> reasoning_ended;  // with a reasoning parser: whether the prompt ended reasoning
  std::optional<std::string> data_parallel_rank;  // X-data-parallel-rank header
  // Responses API: the response's facts; with `store`, the answer is kept
  // there after `conversation` (the messages before it, without instructions).
  std::optional<openai::ResponseFacts> response;
  nlohmann::json conversation;
  ResponseStore* store = nullptr;
};

class GenerationJob : public std::enable_shared_from_this<GenerationJob> {
 public:
  GenerationJob(const ServingContext& context, JobSpec spec, std::shared_ptr<http::ResponseWriter> writer);
  ~GenerationJob();

  // Builds every choice's engine request and submits them; answers the client
  // with an error itself when that fails.
  void Start();

 private:
  struct Choice;
  class Sink;

  // Engine news for choice `index` (called through Sink); `origin` is null
  // when the engine client does not say where the output came from.
  void OnOutput(size_t index, const proto::EngineCoreOutput& output, const OutputOrigin* origin);
  // Choice `index` went to engine `rank` (called inside Submit, mu_ held by Start).
  void OnRouted(size_t index, uint32_t rank);
  // Records the end of a choice in the metrics (once per choice).
  void RecordFinish(Choice& choice, proto::FinishReason reason);
  void OnError(size_t index, const Status& status);
  // Client went away: abort every unfinished engine request.
  void OnDisconnect();
  // Converts one step's logprobs rows into the response's shape.
  std::vector<openai::TokenLogprob> ConvertLogprobs(const proto::Logprobs& logprobs) const;
  // A logprob entry's token text ("token_id:N" with return_tokens_as_token_ids).
  std::string LogprobText(int32_t id) const;
  // Completion echo: puts the prompt (and its logprobs) before the choice's
  // first delta; with max_tokens 0 the prompt is all there is.
  void Echo(Choice& choice, std::string* delta, std::vector<openai::TokenLogprob>* logprobs);
  // The prompt_logprobs field of a choice, or null when none came.
  nlohmann::json PromptLogprobsOf(const Choice& choice) const;
  // Sends what a choice produced (streaming) and finishes the job when all are done.
  void EmitDelta(Choice& choice, const std::string& delta, std::vector<openai::TokenLogprob> logprobs,
                 bool finished);
  void FinishIfDone();
  // Responses API: the whole answer (streamed: the closing events), and the store.
  void FinishResponse(const openai::Usage& usage);
  // Sends `events` as named SSE events.
  void SendEvents(const std::vector<nlohmann::json>& events);
  // Fills a chat chunk from the choice's ChatOutput; false when there is
  // nothing to send yet (text held back, e.g. a partial tag).
  bool ShapeChatChunk(Choice& choice, const std::string& delta, bool finished, openai::ChatChoice* c);
  // The X-Data-Parallel-Rank response header (empty before routing).
  http::Headers RoutingHeaders() const;
  void Fail(const Status& status);  // needs mu_
  openai::Usage TotalUsage() const;

  const ServingContext& context_;
  JobSpec spec_;
  std::shared_ptr<http::ResponseWriter> writer_;
  http::SseStream sse_;
  openai::ResponseMeta meta_;
  std::optional<openai::ResponseEvents> response_events_;  // streamed responses
  std::mutex mu_;
  std::vector<std::unique_ptr<Choice>> choices_;
  bool responded_ = false;      // the answer (or the stream's end) went out
  bool stream_started_ = false;
};

}  // namespace llmserve::frontend::serving
