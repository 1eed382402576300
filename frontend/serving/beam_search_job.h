#pragma once
// BeamSearchJob: one /v1/completions or /v1/chat/completions request with
// use_beam_search, run as vLLM's OpenAI server runs it, above the engine:
// each prompt is its own search (frontend/serving/beam_search.h); every step
// sends each live beam to the engine as a one-token request for 2 × n
// logprobs, all of a step's requests at once (the engine's prefix cache makes
// the repeated prompts cheap), and the next step starts when they all answered.
// The answer is one response object with the n best beams of each prompt as
// its choices. A chat stream (vLLM streams beam search on chat, not on
// completions) opens at once and, when the search is over, carries every
// choice's role chunk, then one chunk per choice with its whole message.
//
// Threads: engine outputs arrive on the engine client's output thread, a
// client disconnect on an HTTP I/O thread; a mutex serialises them. A
// disconnect or an engine error aborts every step request in flight.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/http/response_writer.h"
#include "frontend/http/sse.h"
#include "frontend/openai/responses.h"
#include "frontend/serving/beam_search.h"
#include "frontend/serving/generation_job.h"
#include "frontend/serving/serving_context.h"
#include "proto/engine_core_output.h"

namespace llmserve::frontend::serving {

class BeamSearchJob : public std::enable_shared_from_this<BeamSearchJob> {
 public:
  struct BeamAnswer;  // a finished beam as the response shows it

  BeamSearchJob(const ServingContext& context, JobSpec spec, std::shared_ptr<http::ResponseWriter> writer);
  ~BeamSearchJob();

  // Starts every prompt's search; answers the client with an error itself when that fails.
  void Start();

 private:
  struct Search;
  class Sink;

  // Sends the live beams of search `p` to the engine (mu_ held).
  void SubmitStep(size_t p);
  // One step request's answer (called through Sink).
  void OnOutput(size_t p, size_t beam, int32_t step, const proto::EngineCoreOutput& output);
  void OnError(const Status& status);
  void OnDisconnect();
  // Aborts the step requests in flight (mu_ held).
  void AbortInFlight();
  void Fail(const Status& status);  // mu_ held
  void FinishIfDone();              // mu_ held
  BeamAnswer AnswerOf(const Search& search, const Beam& beam) const;
  std::vector<openai::TokenLogprob> LogprobsOf(const std::vector<int32_t>& ids, const Beam& beam) const;
  void LogOutput(const BeamAnswer& answer) const;  // --enable-log-outputs
  nlohmann::json CompletionBody() const;
  // The chat choices (whole messages, or with `streamed` the one chunk each sends); adds up `usage`.
  std::vector<openai::ChatChoice> ChatChoices(bool streamed, openai::Usage* usage) const;
  void StreamChat();  // the chunks of a streamed chat answer and [DONE]

  const ServingContext& context_;
  JobSpec spec_;
  std::shared_ptr<http::ResponseWriter> writer_;
  openai::ResponseMeta meta_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Search>> searches_;  // one per prompt
  http::SseStream sse_;
  bool responded_ = false;
  bool stream_started_ = false;
};

}  // namespace llmserve::frontend::serving
