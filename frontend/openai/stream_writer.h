#pragma once
// StreamWriter: writes one OpenAI streaming response as Server-Sent Events,
// keeping the order clients rely on:
//   chat:        per choice a role chunk first (delta {"role": "assistant", "content": ""}),
//                then content deltas, then a chunk with its finish_reason;
//   completions: text deltas, then a chunk with the finish_reason;
//   both:        after every choice finished, a usage chunk with "choices": [] when
//                stream_options.include_usage was set, then `data: [DONE]`.
// With continuous_usage_stats every chunk carries the usage so far. An error
// after the header went out is sent as one `data: {"error": {...}}` event
// followed by `data: [DONE]`, as vLLM does.
//
// Not thread-safe: one thread at a time drives a stream (the engine client's
// output thread); the ResponseWriter underneath is.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/http/response_writer.h"
#include "frontend/openai/api_error.h"
#include "frontend/openai/responses.h"

namespace llmserve::frontend::openai {

class StreamWriter {
 public:
  enum class Api { kCompletion, kChat };

  struct Options {
    Api api = Api::kCompletion;
    int32_t num_choices = 1;              // choices indexed 0..num_choices-1
    int32_t prompt_tokens = 0;            // for usage
    bool include_usage = false;           // stream_options.include_usage
    bool continuous_usage_stats = false;  // stream_options.continuous_usage_stats
  };

  StreamWriter(Options options, ResponseMeta meta, std::shared_ptr<http::ResponseWriter> writer);

  // Sends the 200 SSE header (plus `headers`, e.g. X-Request-Id) and, for chat,
  // every choice's role chunk.
  void Begin(http::Headers headers = {});

  // Sends `text` produced by `num_tokens` new tokens of choice `index`.
  void Delta(int32_t index, const std::string& text, int32_t num_tokens,
             std::optional<std::vector<TokenLogprob>> logprobs = std::nullopt);

  // Ends choice `index`: its last text (may be empty) and why it stopped.
  void Finish(int32_t index, const std::string& text, int32_t num_tokens, const std::string& finish_reason,
              StopReason stop_reason = {}, std::optional<std::vector<TokenLogprob>> logprobs = std::nullopt);

  // After every choice finished: the usage chunk if asked for, then [DONE].
  void Done(std::optional<int32_t> cached_tokens = std::nullopt);

  // Sends `error` as an event, then [DONE]. Before Begin(), answers with the error status instead.
  void Fail(const ApiError& error);

  // True once the client is gone: stop producing (the request should be aborted).
  bool closed() const { return writer_->closed(); }

  // Output tokens sent so far over all choices.
  int32_t completion_tokens() const { return completion_tokens_; }

 private:
  void Send(const std::string& payload);
  std::optional<Usage> RunningUsage() const;
  void SendChoice(int32_t index, const std::string& text, std::optional<std::vector<TokenLogprob>> logprobs,
                  std::optional<std::string> finish_reason, StopReason stop_reason);

  Options options_;
  ResponseMeta meta_;
  std::shared_ptr<http::ResponseWriter> writer_;
  bool begun_ = false;
  bool done_ = false;
  int32_t completion_tokens_ = 0;
  std::vector<int32_t> text_offsets_;  // per choice: characters sent so far (completion logprobs)
};

}  // namespace llmserve::frontend::openai
